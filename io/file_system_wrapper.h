// File: io/file_system_wrapper.h
//
// FileSystemWrapper: a FileSystem that forwards every call to another one.
// Subclass it to observe or alter some calls (counting, blocking, fault
// injection) and inherit the rest. Files it returns are the target's files
// unless the subclass wraps them too (see WritableFileWrapper and
// RandomAccessFileWrapper).
//
// Thread safety: as thread-safe as the target.
// Errors: those of the target (the wrapper adds none).
// Lifetime: `target` must outlive the wrapper.

#ifndef BINLOG_IO_FILE_SYSTEM_WRAPPER_H_
#define BINLOG_IO_FILE_SYSTEM_WRAPPER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/file_system.h"

namespace binlog {
namespace io {

class WritableFileWrapper : public WritableFile {
 public:
  explicit WritableFileWrapper(std::unique_ptr<WritableFile> target)
      : target_(std::move(target)) {}
  absl::Status Write(uint64_t offset, absl::string_view data) override {
    return target_->Write(offset, data);
  }
  absl::Status WriteV(uint64_t offset,
                      absl::Span<const absl::string_view> parts) override {
    return target_->WriteV(offset, parts);
  }
  absl::Status Sync() override { return target_->Sync(); }
  absl::Status SyncAll() override { return target_->SyncAll(); }
  absl::Status Allocate(uint64_t offset, uint64_t len,
                        bool keep_size) override {
    return target_->Allocate(offset, len, keep_size);
  }
  absl::Status Truncate(uint64_t size) override {
    return target_->Truncate(size);
  }
  absl::StatusOr<uint64_t> Size() override { return target_->Size(); }
  absl::Status Close() override { return target_->Close(); }
  const std::string& path() const override { return target_->path(); }

 protected:
  WritableFile* target() { return target_.get(); }

 private:
  std::unique_ptr<WritableFile> target_;
};

class RandomAccessFileWrapper : public RandomAccessFile {
 public:
  explicit RandomAccessFileWrapper(std::unique_ptr<RandomAccessFile> target)
      : target_(std::move(target)) {}
  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    return target_->Read(offset, n, scratch, bytes_read);
  }
  absl::StatusOr<uint64_t> Size() const override { return target_->Size(); }
  absl::Status Advise(uint64_t offset, uint64_t len, AccessHint hint) override {
    return target_->Advise(offset, len, hint);
  }
  const std::string& path() const override { return target_->path(); }

 protected:
  const RandomAccessFile* target() const { return target_.get(); }

 private:
  std::unique_ptr<RandomAccessFile> target_;
};

class FileSystemWrapper : public FileSystem {
 public:
  explicit FileSystemWrapper(FileSystem* target) : target_(target) {}

  absl::StatusOr<std::unique_ptr<WritableFile>> OpenWritable(
      const std::string& path, OpenMode mode,
      uint32_t permissions = kDefaultFilePermissions) override {
    return target_->OpenWritable(path, mode, permissions);
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenReadable(
      const std::string& path) override {
    return target_->OpenReadable(path);
  }
  absl::StatusOr<std::unique_ptr<Directory>> OpenDirectory(
      const std::string& path) override {
    return target_->OpenDirectory(path);
  }
  absl::Status CreateDirectory(
      const std::string& path,
      uint32_t permissions = kDefaultDirectoryPermissions) override {
    return target_->CreateDirectory(path, permissions);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    return target_->Rename(from, to);
  }
  absl::Status Remove(const std::string& path) override {
    return target_->Remove(path);
  }
  absl::StatusOr<std::vector<std::string>> ListDirectory(
      const std::string& path) override {
    return target_->ListDirectory(path);
  }
  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    return target_->FileSize(path);
  }
  absl::StatusOr<bool> Exists(const std::string& path) override {
    return target_->Exists(path);
  }
  absl::StatusOr<uint32_t> Permissions(const std::string& path) override {
    return target_->Permissions(path);
  }
  absl::StatusOr<absl::Time> ModificationTime(const std::string& path) override {
    return target_->ModificationTime(path);
  }
  absl::Status SetModificationTime(const std::string& path, absl::Time t) override {
    return target_->SetModificationTime(path, t);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path,
      uint32_t permissions = kDefaultFilePermissions) override {
    return target_->LockFile(path, permissions);
  }
  absl::StatusOr<std::unique_ptr<TempFile>> NewTempFile(
      const std::string& dir) override {
    return target_->NewTempFile(dir);
  }

 protected:
  FileSystem* target() const { return target_; }

 private:
  FileSystem* target_;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_FILE_SYSTEM_WRAPPER_H_
