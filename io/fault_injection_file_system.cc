// FaultInjectionFileSystem: see the header for the model.
//
// Implementation notes.
// - Each file the wrapper has seen has a FileState: a mirror of its content
//   and the list of changes since the last point where everything before
//   was durable. A change keeps its pre-image (the bytes and size it
//   replaced), so the durable base is the mirror with every change undone,
//   newest first. A power cut rebuilds that base and re-applies the changes
//   that survive: durable ones always, lost ones (a failed Sync) never,
//   unsynced ones as PowerLossOptions says.
// - A FileState outlives its path: a rename moves it, a remove detaches it
//   and keeps it in the remove's EntryChange, so undoing the remove brings
//   back the file with its durable content.
// - Locks: mu_ (the file system's maps and counters) is never taken while a
//   FileState::mu is held. Data I/O runs under the file's own mutex only, so
//   the flush stage writing one file and the sync stage syncing it are not
//   serialized by the wrapper beyond what the mirror needs: Sync records how
//   many changes exist, syncs without the lock, then marks those durable;
//   writes that ran meanwhile stay unsynced (a conservative but possible
//   outcome: the fdatasync may or may not have covered them).

#include "io/fault_injection_file_system.h"

#include <algorithm>
#include <memory>
#include <random>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#define BINLOG_FI_RETURN_IF_ERROR(expr) \
  do {                                   \
    absl::Status _fi_s = (expr);         \
    if (!_fi_s.ok()) return _fi_s;       \
  } while (0)

namespace binlog {
namespace io {

const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kWrite: return "write";
    case FaultOp::kSync: return "sync";
    case FaultOp::kAllocate: return "allocate";
    case FaultOp::kTruncate: return "truncate";
    case FaultOp::kOpenWritable: return "open-writable";
    case FaultOp::kRename: return "rename";
    case FaultOp::kRemove: return "remove";
    case FaultOp::kDirSync: return "dir-sync";
    case FaultOp::kTempFile: return "temp-file";
    case FaultOp::kSetTime: return "set-time";
  }
  return "?";
}

namespace {

constexpr uint64_t kSector = 512;

absl::Status FrozenError() {
  return absl::UnknownError("injected: file system frozen (power cut)");
}

std::string Normalize(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}


// Writes `data` at `offset` into `content`, growing it (zeros in a hole).
void ApplyWrite(std::string* content, uint64_t offset, absl::string_view data) {
  if (content->size() < offset + data.size()) {
    content->resize(static_cast<size_t>(offset + data.size()), '\0');
  }
  std::copy(data.begin(), data.end(), content->begin() + static_cast<long>(offset));
}

absl::Status ReadWhole(FileSystem* fs, const std::string& path,
                       std::string* out) {
  auto f = fs->OpenReadable(path);
  if (!f.ok()) return f.status();
  auto size = (*f)->Size();
  if (!size.ok()) return size.status();
  out->assign(static_cast<size_t>(*size), '\0');
  size_t got = 0;
  absl::Status s = (*f)->Read(0, out->size(), out->data(), &got);
  out->resize(got);
  return s;
}

absl::Status WriteWhole(FileSystem* fs, const std::string& path,
                        const std::string& content) {
  auto f = fs->OpenWritable(path, OpenMode::kCreateOrTruncate);
  if (!f.ok()) return f.status();
  absl::Status s = (*f)->Write(0, content);
  absl::Status c = (*f)->Close();
  return s.ok() ? c : s;
}

}  // namespace

// One change of a file's content or size.
struct Change {
  enum class Type { kWrite, kResize };
  enum class State { kUnsynced, kDurable, kLost };
  Type type = Type::kWrite;
  State state = State::kUnsynced;
  uint64_t offset = 0;      // kWrite
  std::string data;         // kWrite
  uint64_t new_size = 0;    // kResize
  std::string pre_image;    // bytes replaced (within the old size)
  uint64_t pre_size = 0;    // size before the change
};

struct FaultInjectionFileSystem::FileState {
  sync::Mutex mu;
  std::string content ABSL_GUARDED_BY(mu);       // mirror of the real file
  std::vector<Change> changes ABSL_GUARDED_BY(mu);  // oldest first
  // Writeback errors reported so far (failed Syncs through any handle).
  // Each handle remembers how many it has reported or was opened after,
  // and its next Sync fails if there are more: Linux reports a writeback
  // error to every open file description once (errseq), so an error one
  // handle's fdatasync saw is not hidden from another handle's.
  uint64_t wb_errors ABSL_GUARDED_BY(mu) = 0;
  // Current path ("" once removed). Guarded by the file system's mu_.
  std::string path;

  // Records a write of `data` at `offset` (already done on the real file).
  void RecordWrite(uint64_t offset, absl::string_view data)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Change c;
    c.type = Change::Type::kWrite;
    c.offset = offset;
    c.data = std::string(data);
    c.pre_size = content.size();
    if (offset < content.size()) {
      c.pre_image = content.substr(
          static_cast<size_t>(offset),
          static_cast<size_t>(std::min<uint64_t>(data.size(),
                                                 content.size() - offset)));
    }
    ApplyWrite(&content, offset, data);
    changes.push_back(std::move(c));
  }

  void RecordResize(uint64_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (size == content.size()) return;
    Change c;
    c.type = Change::Type::kResize;
    c.new_size = size;
    c.pre_size = content.size();
    if (size < content.size()) c.pre_image = content.substr(static_cast<size_t>(size));
    content.resize(static_cast<size_t>(size), '\0');
    changes.push_back(std::move(c));
  }

  // Marks the first `n` changes durable (or lost), then drops the durable
  // prefix (it is part of the base now).
  void Settle(size_t n, bool ok) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    n = std::min(n, changes.size());
    for (size_t i = 0; i < n; ++i) {
      if (changes[i].state == Change::State::kUnsynced) {
        changes[i].state = ok ? Change::State::kDurable : Change::State::kLost;
      }
    }
    size_t drop = 0;
    while (drop < changes.size() &&
           changes[drop].state == Change::State::kDurable) {
      ++drop;
    }
    changes.erase(changes.begin(), changes.begin() + static_cast<long>(drop));
  }

  uint64_t UnsyncedBytes() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    uint64_t n = 0;
    for (const Change& c : changes) {
      if (c.state == Change::State::kDurable) continue;
      n += c.type == Change::Type::kWrite ? c.data.size()
                                          : (c.new_size > c.pre_size
                                                 ? c.new_size - c.pre_size
                                                 : c.pre_size - c.new_size);
    }
    return n;
  }
};

struct FaultInjectionFileSystem::EntryChange {
  enum class Type { kCreate, kRename, kRemove };
  Type type = Type::kCreate;
  std::string path;   // kCreate, kRemove: the entry; kRename: the source
  std::string to;     // kRename: the target
  std::shared_ptr<FileState> file;
  std::shared_ptr<FileState> replaced;  // kRename: the file `to` named before
};

// --- WritableFile ----------------------------------------------------------

class FaultInjectionFileSystem::File final : public WritableFileWrapper {
 public:
  File(FaultInjectionFileSystem* fs, std::unique_ptr<WritableFile> target,
       std::shared_ptr<FileState> state, uint64_t epoch)
      : WritableFileWrapper(std::move(target)),
        fs_(fs),
        state_(std::move(state)),
        epoch_(epoch) {
    sync::MutexLock l(&state_->mu);
    seen_wb_errors_ = state_->wb_errors;
  }

  absl::Status Write(uint64_t offset, absl::string_view data) override {
    return DoWrite(offset, data);
  }

  absl::Status WriteV(uint64_t offset,
                      absl::Span<const absl::string_view> parts) override {
    std::string all;
    for (absl::string_view p : parts) all.append(p.data(), p.size());
    return DoWrite(offset, all);
  }

  absl::Status Sync() override { return DoSync(false); }
  absl::Status SyncAll() override { return DoSync(true); }

  absl::Status Allocate(uint64_t offset, uint64_t len,
                        bool keep_size) override {
    absl::Status s = fs_->Admit(static_cast<int>(FaultOp::kAllocate), path(),
                                "", epoch_, nullptr);
    if (!s.ok()) return s;
    sync::MutexLock l(&state_->mu);
    s = target()->Allocate(offset, len, keep_size);
    if (!s.ok()) return s;
    if (!keep_size && offset + len > state_->content.size()) {
      state_->RecordResize(offset + len);
    }
    return absl::OkStatus();
  }

  absl::Status Truncate(uint64_t size) override {
    absl::Status s = fs_->Admit(static_cast<int>(FaultOp::kTruncate), path(),
                                "", epoch_, nullptr);
    if (!s.ok()) return s;
    sync::MutexLock l(&state_->mu);
    s = target()->Truncate(size);
    if (!s.ok()) return s;
    state_->RecordResize(size);
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> Size() override {
    BINLOG_FI_RETURN_IF_ERROR(fs_->AdmitRead());
    return target()->Size();
  }

  absl::Status Close() override {
    // The descriptor is released either way (close is never retried).
    absl::Status s = target()->Close();
    if (fs_->frozen()) return FrozenError();
    return s;
  }

 private:
  absl::Status DoWrite(uint64_t offset, absl::string_view data) {
    bool short_write = false;
    BINLOG_FI_RETURN_IF_ERROR(fs_->Admit(static_cast<int>(FaultOp::kWrite),
                                         path(), "", epoch_, &short_write));
    absl::string_view part = data;
    if (short_write) part = data.substr(0, data.size() / 2);
    sync::MutexLock l(&state_->mu);
    if (!part.empty()) {
      absl::Status s = target()->Write(offset, part);
      if (!s.ok()) {
        // A real error may have written part of it: re-read the truth.
        ResyncMirror();
        return s;
      }
      state_->RecordWrite(offset, part);
    }
    if (short_write) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "injected ENOSPC after a short write of ", part.size(), " of ",
          data.size(), " bytes: ", path()));
    }
    return absl::OkStatus();
  }

  absl::Status DoSync(bool all) {
    absl::Status s = fs_->Admit(static_cast<int>(FaultOp::kSync), path(), "",
                                epoch_, nullptr);
    size_t n;
    {
      sync::MutexLock l(&state_->mu);
      n = state_->changes.size();
      if (!s.ok()) {
        // The kernel reported a writeback error: the dirty data is gone for
        // good even though reads still return it (fsyncgate).
        if (!fs_->frozen()) {
          state_->Settle(n, /*ok=*/false);
          seen_wb_errors_ = ++state_->wb_errors;
        }
        return s;
      }
      if (state_->wb_errors > seen_wb_errors_) {
        // Another handle's Sync failed since this one last synced: this
        // one reports it too (its data may be among what was lost).
        seen_wb_errors_ = state_->wb_errors;
        state_->Settle(n, /*ok=*/false);
        return absl::UnknownError(absl::StrCat(
            "injected EIO (a writeback error reported through another "
            "descriptor): sync of ", path()));
      }
    }
    s = all ? target()->SyncAll() : target()->Sync();
    sync::MutexLock l(&state_->mu);
    if (s.ok() && state_->wb_errors > seen_wb_errors_) {
      // Another handle's Sync failed while this one ran: the pages this
      // one waited for may be among those lost, and Linux reports the
      // error here too.
      seen_wb_errors_ = state_->wb_errors;
      state_->Settle(n, /*ok=*/false);
      return absl::UnknownError(absl::StrCat(
          "injected EIO (a writeback error reported through another "
          "descriptor during this sync): sync of ", path()));
    }
    state_->Settle(n, s.ok());
    return s;
  }

  void ResyncMirror() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_->mu) {
    std::string now;
    if (ReadWhole(fs_->target(), path(), &now).ok() && now != state_->content) {
      // Record the difference as unsynced changes over the whole file.
      state_->RecordResize(0);
      if (!now.empty()) state_->RecordWrite(0, now);
    }
  }

  FaultInjectionFileSystem* const fs_;
  const std::shared_ptr<FileState> state_;
  const uint64_t epoch_;
  uint64_t seen_wb_errors_ ABSL_GUARDED_BY(state_->mu) = 0;
};

// --- RandomAccessFile, Directory -------------------------------------------

namespace {

class ReadableFile final : public RandomAccessFileWrapper {
 public:
  ReadableFile(const std::atomic<bool>* frozen,
               std::unique_ptr<RandomAccessFile> target)
      : RandomAccessFileWrapper(std::move(target)), frozen_(frozen) {}
  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    if (frozen_->load()) {
      *bytes_read = 0;
      return FrozenError();
    }
    return RandomAccessFileWrapper::Read(offset, n, scratch, bytes_read);
  }
  absl::StatusOr<uint64_t> Size() const override {
    if (frozen_->load()) return FrozenError();
    return RandomAccessFileWrapper::Size();
  }

 private:
  const std::atomic<bool>* frozen_;
};

}  // namespace

class FaultInjectionFileSystem::Dir final : public Directory {
 public:
  Dir(FaultInjectionFileSystem* fs, std::unique_ptr<Directory> target,
      uint64_t epoch)
      : fs_(fs), target_(std::move(target)), epoch_(epoch),
        key_(Normalize(target_->path())) {}

  absl::Status Sync() override {
    absl::Status s = fs_->Admit(static_cast<int>(FaultOp::kDirSync), key_, "",
                                epoch_, nullptr);
    if (!s.ok()) return s;
    size_t n = fs_->EntryCount(key_);
    s = target_->Sync();
    if (s.ok()) fs_->DirSynced(key_, n);
    return s;
  }
  const std::string& path() const override { return target_->path(); }

 private:
  FaultInjectionFileSystem* const fs_;
  std::unique_ptr<Directory> target_;
  const uint64_t epoch_;
  const std::string key_;
};

// A temporary file: every call is admitted as kTempFile (faults, freeze,
// hook), nothing is tracked (it has no name and vanishes in a crash).
class FaultInjectionFileSystem::Temp final : public TempFile {
 public:
  Temp(FaultInjectionFileSystem* fs, std::unique_ptr<TempFile> target,
       uint64_t epoch)
      : fs_(fs), target_(std::move(target)), epoch_(epoch) {}

  absl::Status Write(uint64_t offset, absl::string_view data) override {
    BINLOG_FI_RETURN_IF_ERROR(Admit());
    return target_->Write(offset, data);
  }
  absl::Status Read(uint64_t offset, size_t n, char* scratch,
                    size_t* bytes_read) const override {
    *bytes_read = 0;
    BINLOG_FI_RETURN_IF_ERROR(Admit());
    return target_->Read(offset, n, scratch, bytes_read);
  }
  absl::Status Truncate(uint64_t size) override {
    BINLOG_FI_RETURN_IF_ERROR(Admit());
    return target_->Truncate(size);
  }
  const std::string& path() const override { return target_->path(); }

 private:
  absl::Status Admit() const {
    return fs_->Admit(static_cast<int>(FaultOp::kTempFile), target_->path(), "",
                      epoch_, nullptr);
  }

  FaultInjectionFileSystem* const fs_;
  std::unique_ptr<TempFile> target_;
  const uint64_t epoch_;
};

// --- FaultInjectionFileSystem ----------------------------------------------

FaultInjectionFileSystem::FaultInjectionFileSystem(FileSystem* target)
    : FileSystemWrapper(target != nullptr ? target : FileSystem::Default()) {}

FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

void FaultInjectionFileSystem::InjectFault(const FaultSpec& spec) {
  sync::MutexLock l(&mu_);
  Rule r;
  r.spec = spec;
  r.countdown = std::max(1, spec.nth);
  rules_.push_back(std::move(r));
}

void FaultInjectionFileSystem::ClearFaults() {
  sync::MutexLock l(&mu_);
  rules_.clear();
}

void FaultInjectionFileSystem::Freeze() {
  sync::MutexLock l(&mu_);
  frozen_.store(true);
}

void FaultInjectionFileSystem::FreezeAfter(uint64_t ops) {
  sync::MutexLock l(&mu_);
  freeze_at_ = ops_ + ops;
  if (ops == 0) frozen_.store(true);
}

uint64_t FaultInjectionFileSystem::mutating_ops() const {
  sync::MutexLock l(&mu_);
  return ops_;
}

uint64_t FaultInjectionFileSystem::calls(FaultOp op) const {
  return calls_[static_cast<int>(op)].load();
}

absl::Status FaultInjectionFileSystem::AdmitRead() const {
  if (frozen_.load()) return FrozenError();
  return absl::OkStatus();
}

void FaultInjectionFileSystem::SetOpHook(OpHook hook) {
  if (hook) {
    std::atomic_store(&hook_, std::make_shared<const OpHook>(std::move(hook)));
  } else {
    std::atomic_store(&hook_, std::shared_ptr<const OpHook>());
  }
}

absl::Status FaultInjectionFileSystem::Admit(int op, const std::string& path,
                                             const std::string& path2,
                                             uint64_t epoch,
                                             bool* short_write) {
  calls_[op].fetch_add(1);
  if (op != kOtherMutating) {
    std::shared_ptr<const OpHook> hook = std::atomic_load(&hook_);
    if (hook != nullptr) (*hook)(static_cast<FaultOp>(op), path);
  }
  sync::MutexLock l(&mu_);
  if (frozen_.load()) return FrozenError();
  if (epoch != kAnyEpoch && epoch != epoch_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "injected: handle of ", path, " was opened before a power loss"));
  }
  if (freeze_at_ != 0 && ops_ >= freeze_at_) {
    frozen_.store(true);
    return FrozenError();
  }
  ++ops_;
  if (op == kOtherMutating) return absl::OkStatus();
  for (Rule& r : rules_) {
    if (static_cast<int>(r.spec.op) != op) continue;
    if (!r.spec.path_substr.empty() &&
        !absl::StrContains(path, r.spec.path_substr) &&
        !absl::StrContains(path2, r.spec.path_substr)) {
      continue;
    }
    bool fire = false;
    if (r.fired) {
      fire = r.spec.persistent;
    } else if (--r.countdown == 0) {
      r.fired = true;
      fire = true;
    }
    if (!fire) continue;
    faults_fired_.fetch_add(1);
    const FaultOp fop = static_cast<FaultOp>(op);
    std::string what =
        absl::StrCat(FaultOpName(fop), " ", path, path2.empty() ? "" : " -> ",
                     path2);
    if (r.spec.kind == FaultKind::kShortWrite && fop == FaultOp::kWrite &&
        short_write != nullptr) {
      *short_write = true;
      return absl::OkStatus();
    }
    if (r.spec.kind == FaultKind::kEio) {
      return absl::UnknownError(absl::StrCat("injected EIO: ", what));
    }
    return absl::ResourceExhaustedError(
        absl::StrCat("injected ENOSPC: ", what));
  }
  return absl::OkStatus();
}

std::shared_ptr<FaultInjectionFileSystem::FileState>
FaultInjectionFileSystem::StateFor(const std::string& path) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  auto st = std::make_shared<FileState>();
  std::string content;
  if (!ReadWhole(target(), path, &content).ok()) return nullptr;
  {
    sync::MutexLock l(&st->mu);
    st->content = std::move(content);
  }
  st->path = path;
  files_[path] = st;
  return st;
}

void FaultInjectionFileSystem::RecordEntry(const std::string& dir,
                                           EntryChange change) {
  entries_[Normalize(dir)].push_back(std::move(change));
}

size_t FaultInjectionFileSystem::EntryCount(const std::string& dir) {
  sync::MutexLock l(&mu_);
  auto it = entries_.find(dir);
  return it == entries_.end() ? 0 : it->second.size();
}

void FaultInjectionFileSystem::DirSynced(const std::string& dir, size_t count) {
  sync::MutexLock l(&mu_);
  auto it = entries_.find(dir);
  if (it == entries_.end()) return;
  count = std::min(count, it->second.size());
  it->second.erase(it->second.begin(),
                   it->second.begin() + static_cast<long>(count));
}

uint64_t FaultInjectionFileSystem::UnsyncedBytes(const std::string& path) {
  std::shared_ptr<FileState> st;
  {
    sync::MutexLock l(&mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return 0;
    st = it->second;
  }
  sync::MutexLock l(&st->mu);
  return st->UnsyncedBytes();
}

int FaultInjectionFileSystem::UnsyncedEntries(const std::string& dir) {
  return static_cast<int>(EntryCount(Normalize(dir)));
}

absl::StatusOr<std::unique_ptr<WritableFile>>
FaultInjectionFileSystem::OpenWritable(const std::string& path,
                                       OpenMode mode, uint32_t permissions) {
  absl::Status s = Admit(static_cast<int>(FaultOp::kOpenWritable), path, "",
                         kAnyEpoch, nullptr);
  if (!s.ok()) return s;
  sync::MutexLock l(&mu_);
  auto existed = target()->Exists(path);
  if (!existed.ok()) return existed.status();
  std::shared_ptr<FileState> st;
  if (*existed) {
    // Known, or read now: content the wrapper did not see written is
    // durable. Read before the open, which may truncate.
    st = StateFor(path);
    if (st == nullptr) {
      return absl::UnknownError(absl::StrCat("fault fs: cannot read ", path));
    }
  }
  auto f = target()->OpenWritable(path, mode, permissions);
  if (!f.ok()) return f.status();
  if (!*existed) {
    st = std::make_shared<FileState>();
    st->path = path;
    files_[path] = st;
    EntryChange c;
    c.type = EntryChange::Type::kCreate;
    c.path = path;
    c.file = st;
    RecordEntry(DirName(path), std::move(c));
  } else if (mode == OpenMode::kCreateOrTruncate) {
    sync::MutexLock fl(&st->mu);
    st->RecordResize(0);
  }
  return std::unique_ptr<WritableFile>(
      new File(this, std::move(*f), std::move(st), epoch_));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
FaultInjectionFileSystem::OpenReadable(const std::string& path) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  auto f = target()->OpenReadable(path);
  if (!f.ok()) return f.status();
  return std::unique_ptr<RandomAccessFile>(
      new ReadableFile(&frozen_, std::move(*f)));
}

absl::StatusOr<std::unique_ptr<Directory>>
FaultInjectionFileSystem::OpenDirectory(const std::string& path) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  auto d = target()->OpenDirectory(path);
  if (!d.ok()) return d.status();
  uint64_t epoch;
  {
    sync::MutexLock l(&mu_);
    epoch = epoch_;
  }
  return std::unique_ptr<Directory>(new Dir(this, std::move(*d), epoch));
}

absl::Status FaultInjectionFileSystem::CreateDirectory(const std::string& path,
                                                       uint32_t permissions) {
  absl::Status s = Admit(kOtherMutating, path, "", kAnyEpoch, nullptr);
  if (!s.ok()) return s;
  return target()->CreateDirectory(path, permissions);
}

absl::Status FaultInjectionFileSystem::Rename(const std::string& from,
                                              const std::string& to) {
  absl::Status s =
      Admit(static_cast<int>(FaultOp::kRename), from, to, kAnyEpoch, nullptr);
  if (!s.ok()) return s;
  sync::MutexLock l(&mu_);
  auto from_exists = target()->Exists(from);
  if (!from_exists.ok()) return from_exists.status();
  if (!*from_exists) return target()->Rename(from, to);  // its error
  std::shared_ptr<FileState> src = StateFor(from);
  std::shared_ptr<FileState> replaced;
  auto to_exists = target()->Exists(to);
  if (!to_exists.ok()) return to_exists.status();
  if (*to_exists) replaced = StateFor(to);
  s = target()->Rename(from, to);
  if (!s.ok()) return s;
  files_.erase(from);
  if (src != nullptr) {
    src->path = to;
    files_[to] = src;
  }
  if (replaced != nullptr) replaced->path.clear();
  EntryChange c;
  c.type = EntryChange::Type::kRename;
  c.path = from;
  c.to = to;
  c.file = src;
  c.replaced = replaced;
  RecordEntry(DirName(to), std::move(c));
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::Remove(const std::string& path) {
  absl::Status s =
      Admit(static_cast<int>(FaultOp::kRemove), path, "", kAnyEpoch, nullptr);
  if (!s.ok()) return s;
  sync::MutexLock l(&mu_);
  auto exists = target()->Exists(path);
  if (!exists.ok()) return exists.status();
  std::shared_ptr<FileState> st = *exists ? StateFor(path) : nullptr;
  s = target()->Remove(path);
  if (!s.ok()) return s;
  files_.erase(path);
  if (st != nullptr) {
    st->path.clear();
    EntryChange c;
    c.type = EntryChange::Type::kRemove;
    c.path = path;
    c.file = st;
    RecordEntry(DirName(path), std::move(c));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>>
FaultInjectionFileSystem::ListDirectory(const std::string& path) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  return target()->ListDirectory(path);
}

absl::StatusOr<uint64_t> FaultInjectionFileSystem::FileSize(
    const std::string& path) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  return target()->FileSize(path);
}

absl::StatusOr<bool> FaultInjectionFileSystem::Exists(const std::string& path) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  return target()->Exists(path);
}

absl::StatusOr<absl::Time> FaultInjectionFileSystem::ModificationTime(
    const std::string& path) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  return target()->ModificationTime(path);
}

absl::Status FaultInjectionFileSystem::SetModificationTime(const std::string& path,
                                                           absl::Time t) {
  BINLOG_FI_RETURN_IF_ERROR(
      Admit(static_cast<int>(FaultOp::kSetTime), path, "", kAnyEpoch, nullptr));
  return target()->SetModificationTime(path, t);
}

absl::StatusOr<std::unique_ptr<FileLock>> FaultInjectionFileSystem::LockFile(
    const std::string& path, uint32_t permissions) {
  BINLOG_FI_RETURN_IF_ERROR(AdmitRead());
  return target()->LockFile(path, permissions);
}

absl::StatusOr<std::unique_ptr<TempFile>> FaultInjectionFileSystem::NewTempFile(
    const std::string& dir) {
  const std::string path = JoinPath(dir, "<unnamed temporary file>");
  BINLOG_FI_RETURN_IF_ERROR(Admit(static_cast<int>(FaultOp::kTempFile), path,
                                  "", kAnyEpoch, nullptr));
  auto t = target()->NewTempFile(dir);
  if (!t.ok()) return t.status();
  uint64_t epoch;
  {
    sync::MutexLock l(&mu_);
    epoch = epoch_;
  }
  return std::unique_ptr<TempFile>(new Temp(this, std::move(*t), epoch));
}

void FaultInjectionFileSystem::ResetState() {
  sync::MutexLock l(&mu_);
  files_.clear();
  entries_.clear();
  rules_.clear();
  ops_ = 0;
  freeze_at_ = 0;
  ++epoch_;
  frozen_.store(false);
}

namespace {

// The durable base of a file: its mirror with every change undone.
std::string BaseContent(const std::string& content,
                        const std::vector<Change>& changes) {
  std::string base = content;
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    const Change& c = *it;
    if (c.type == Change::Type::kWrite) {
      if (!c.pre_image.empty()) ApplyWrite(&base, c.offset, c.pre_image);
    } else if (c.new_size < c.pre_size) {
      base.resize(static_cast<size_t>(c.new_size));
      base.append(c.pre_image);
    }
    base.resize(static_cast<size_t>(c.pre_size), '\0');
  }
  return base;
}

void Apply(std::string* content, const Change& c, uint64_t prefix_bytes) {
  if (c.type == Change::Type::kWrite) {
    ApplyWrite(content, c.offset,
               absl::string_view(c.data).substr(0, static_cast<size_t>(
                                                       prefix_bytes)));
  } else {
    content->resize(static_cast<size_t>(c.new_size), '\0');
  }
}

}  // namespace

absl::StatusOr<PowerLossReport> FaultInjectionFileSystem::SimulatePowerLoss(
    const PowerLossOptions& options) {
  sync::MutexLock l(&mu_);
  std::mt19937_64 rng(options.seed);
  PowerLossReport report;

  // 1. Directory entries: undo the unsynced changes, newest first.
  for (auto& [dir, changes] : entries_) {
    size_t keep = 0;
    if (options.keep_random_dir_prefix) keep = rng() % (changes.size() + 1);
    for (size_t i = changes.size(); i-- > keep;) {
      EntryChange& c = changes[i];
      ++report.entries_undone;
      switch (c.type) {
        case EntryChange::Type::kCreate: {
          absl::Status s = target()->Remove(c.path);
          if (!s.ok() && !absl::IsNotFound(s)) return s;
          if (c.file != nullptr && c.file->path == c.path) {
            files_.erase(c.path);
            c.file->path.clear();
          }
          report.log.push_back(absl::StrCat("undo create ", c.path));
          break;
        }
        case EntryChange::Type::kRename: {
          absl::Status s = target()->Rename(c.to, c.path);
          if (!s.ok()) return s;
          files_.erase(c.to);
          if (c.file != nullptr) {
            c.file->path = c.path;
            files_[c.path] = c.file;
          }
          if (c.replaced != nullptr) {
            std::string content;
            {
              sync::MutexLock fl(&c.replaced->mu);
              content = c.replaced->content;
            }
            s = WriteWhole(target(), c.to, content);
            if (!s.ok()) return s;
            c.replaced->path = c.to;
            files_[c.to] = c.replaced;
          }
          report.log.push_back(
              absl::StrCat("undo rename ", c.path, " -> ", c.to));
          break;
        }
        case EntryChange::Type::kRemove: {
          std::string content;
          {
            sync::MutexLock fl(&c.file->mu);
            content = c.file->content;
          }
          absl::Status s = WriteWhole(target(), c.path, content);
          if (!s.ok()) return s;
          c.file->path = c.path;
          files_[c.path] = c.file;
          report.log.push_back(absl::StrCat("undo remove ", c.path));
          break;
        }
      }
    }
  }
  entries_.clear();

  // 2. File data: rebuild the durable base, re-apply what survives.
  using Data = PowerLossOptions::Data;
  for (auto& [path, st] : files_) {
    sync::MutexLock fl(&st->mu);
    if (st->changes.empty()) continue;
    std::string result = BaseContent(st->content, st->changes);
    std::vector<size_t> unsynced;  // indexes of unsynced changes
    for (size_t i = 0; i < st->changes.size(); ++i) {
      if (st->changes[i].state == Change::State::kUnsynced) unsynced.push_back(i);
    }
    size_t cut = unsynced.size();  // kKeepRandomPrefix: first unsynced lost
    uint64_t cut_bytes = 0;
    size_t torn = unsynced.size();  // kTearLastSector: the torn change
    if (options.data == Data::kKeepRandomPrefix && !unsynced.empty()) {
      cut = static_cast<size_t>(rng() % (unsynced.size() + 1));
      if (cut < unsynced.size()) {
        const Change& c = st->changes[unsynced[cut]];
        uint64_t len = c.type == Change::Type::kWrite ? c.data.size() : 1;
        cut_bytes = rng() % (len + 1);
      }
    }
    if (options.data == Data::kTearLastSector) {
      for (size_t k = unsynced.size(); k-- > 0;) {
        if (st->changes[unsynced[k]].type == Change::Type::kWrite) {
          torn = k;
          break;
        }
      }
    }
    size_t k = 0;  // position in `unsynced`
    for (size_t i = 0; i < st->changes.size(); ++i) {
      const Change& c = st->changes[i];
      if (c.state == Change::State::kDurable) {
        Apply(&result, c, c.data.size());
        continue;
      }
      if (c.state == Change::State::kLost) continue;
      const size_t pos = k++;
      switch (options.data) {
        case Data::kDropUnsynced:
          break;
        case Data::kKeepRandomPrefix:
          if (pos < cut) {
            Apply(&result, c, c.data.size());
          } else if (pos == cut && cut_bytes > 0) {
            Apply(&result, c, cut_bytes);
          }
          break;
        case Data::kTearLastSector:
          if (pos != torn) {
            Apply(&result, c, c.data.size());
          } else {
            uint64_t end = c.offset + c.data.size();
            uint64_t last = std::max(c.offset, (end - 1) / kSector * kSector);
            uint64_t keep = (last - c.offset) + rng() % (end - last);
            Apply(&result, c, keep);
          }
          break;
        case Data::kRandomSectors:
          if (c.type == Change::Type::kResize) {
            if (rng() % 2) Apply(&result, c, 0);
            break;
          }
          for (uint64_t p = c.offset; p < c.offset + c.data.size();) {
            uint64_t next = std::min<uint64_t>((p / kSector + 1) * kSector,
                                               c.offset + c.data.size());
            if (rng() % 2) {
              ApplyWrite(&result, p,
                         absl::string_view(c.data).substr(
                             static_cast<size_t>(p - c.offset),
                             static_cast<size_t>(next - p)));
            }
            p = next;
          }
          break;
      }
    }
    if (result != st->content) {
      ++report.files_reverted;
      report.bytes_dropped += st->UnsyncedBytes();
      absl::Status s = WriteWhole(target(), path, result);
      if (!s.ok()) return s;
      report.log.push_back(absl::StrCat("revert ", path, ": ",
                                        st->content.size(), " -> ",
                                        result.size(), " bytes"));
    }
  }

  // 3. Reboot: what is on disk is durable now.
  files_.clear();
  rules_.clear();
  ops_ = 0;
  freeze_at_ = 0;
  ++epoch_;
  frozen_.store(false);
  return report;
}

}  // namespace io
}  // namespace binlog
