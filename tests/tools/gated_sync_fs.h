// GatedSyncFileSystem: the default file system with a gate on every
// fdatasync (WritableFile::Sync and SyncAll): while the gate is shut, a
// sync waits; blocked() says how many wait. The relay tests hold a copy's
// fdatasync with it to show what may and may not happen before it.

#ifndef BINLOG_TESTS_TOOLS_GATED_SYNC_FS_H_
#define BINLOG_TESTS_TOOLS_GATED_SYNC_FS_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "io/file_system.h"
#include "io/file_system_wrapper.h"

namespace binlog {
namespace server {

class GatedSyncFileSystem : public io::FileSystemWrapper {
 public:
  GatedSyncFileSystem() : io::FileSystemWrapper(io::FileSystem::Default()) {}
  absl::StatusOr<std::unique_ptr<io::WritableFile>> OpenWritable(
      const std::string& path, io::OpenMode mode,
      uint32_t permissions = io::kDefaultFilePermissions) override {
    auto f = io::FileSystemWrapper::OpenWritable(path, mode, permissions);
    if (!f.ok()) return f.status();
    return std::unique_ptr<io::WritableFile>(new File(std::move(*f), this));
  }
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int blocked() {
    std::lock_guard<std::mutex> l(mu_);
    return blocked_;
  }

 private:
  class File : public io::WritableFileWrapper {
   public:
    File(std::unique_ptr<io::WritableFile> f, GatedSyncFileSystem* fs)
        : io::WritableFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Sync() override {
      fs_->Wait();
      return io::WritableFileWrapper::Sync();
    }
    absl::Status SyncAll() override {
      fs_->Wait();
      return io::WritableFileWrapper::SyncAll();
    }

   private:
    GatedSyncFileSystem* fs_;
  };
  void Wait() {
    std::unique_lock<std::mutex> l(mu_);
    ++blocked_;
    cv_.wait(l, [this] { return open_; });
    --blocked_;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int blocked_ = 0;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_TESTS_TOOLS_GATED_SYNC_FS_H_
