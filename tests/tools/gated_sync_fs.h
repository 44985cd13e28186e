// GatedSyncFileSystem: the default file system with a gate on every
// fdatasync (WritableFile::Sync and SyncAll): while the gate is shut, a
// sync waits; blocked() says how many wait. The relay tests hold a copy's
// fdatasync with it to show what may and may not happen before it. A
// second gate holds reads (RandomAccessFile::Read) of the files whose
// path contains a given string (ShutReads, OpenReads, blocked_reads), to
// stop a reader of the copy at a chosen file.

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
  absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    auto f = io::FileSystemWrapper::OpenReadable(path);
    if (!f.ok()) return f.status();
    return std::unique_ptr<io::RandomAccessFile>(new ReadFile(std::move(*f), this));
  }
  void ShutReads(const std::string& path_substr) {
    std::lock_guard<std::mutex> l(mu_);
    reads_shut_ = true;
    read_gate_ = path_substr;
  }
  void OpenReads() {
    {
      std::lock_guard<std::mutex> l(mu_);
      reads_shut_ = false;
    }
    cv_.notify_all();
  }
  int blocked_reads() {
    std::lock_guard<std::mutex> l(mu_);
    return blocked_reads_;
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
  class ReadFile : public io::RandomAccessFileWrapper {
   public:
    ReadFile(std::unique_ptr<io::RandomAccessFile> f, GatedSyncFileSystem* fs)
        : io::RandomAccessFileWrapper(std::move(f)), fs_(fs) {}
    absl::Status Read(uint64_t offset, size_t n, char* scratch,
                      size_t* bytes_read) const override {
      fs_->WaitRead(path());
      return io::RandomAccessFileWrapper::Read(offset, n, scratch, bytes_read);
    }

   private:
    GatedSyncFileSystem* fs_;
  };
  void WaitRead(const std::string& path) {
    std::unique_lock<std::mutex> l(mu_);
    if (!reads_shut_ || path.find(read_gate_) == std::string::npos) return;
    ++blocked_reads_;
    cv_.wait(l, [this] { return !reads_shut_; });
    --blocked_reads_;
  }
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
  bool reads_shut_ = false;
  std::string read_gate_;
  int blocked_reads_ = 0;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_TESTS_TOOLS_GATED_SYNC_FS_H_
