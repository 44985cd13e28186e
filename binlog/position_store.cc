// PositionStore: see position_store.h for the format and the contract.
//
// State.
//   durable_slot_  the slot whose record is durable (synced). Never written
//                  while it is the durable slot.
//   W = 1 - durable_slot_: the slot every write goes to until the next
//                  successful sync, which makes W the durable slot.
//   seq_ / durable_seq_: sequence of the newest record (in buf_ or written
//                  to W) and of the record in the durable slot.
//   buf_           one slot-sized buffer, allocated at Open, holding the
//                  newest record; pending_write_ says it is not in W yet.
//
// Invariant: whatever unsynced writes a power loss tears or drops, they all
// went to W, so the durable slot still holds a valid record with sequence
// durable_seq_, and W holds either garbage (rejected by the CRC) or a
// complete record with a higher sequence. Open() therefore returns the last
// durable record or a newer complete one, never an older or torn one.
//
// Why fdatasync in Open(): after a process crash (not a power loss) the
// newest record may be in W's page-cache pages only. Open() picks it, so W
// becomes the durable slot; if we then wrote to the other slot before W
// reached the disk, a power loss could take both. Syncing once at open
// closes that window.

#include "binlog/position_store.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "binlog/checksum.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace {

constexpr char kMagic[8] = {'B', 'L', 'P', 'O', 'S', 'S', 'T', '1'};
constexpr size_t kCrcOffset = 8;
constexpr size_t kLenOffset = 12;
constexpr size_t kSeqOffset = 16;
constexpr size_t kSlotSizeOffset = 24;
constexpr size_t kVersionOffset = 28;
constexpr size_t kHeaderSize = 32;
constexpr uint32_t kVersion = 1;
constexpr uint32_t kMinSlot = 4096;
constexpr uint32_t kMaxSlot = 16u << 20;

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void PutU64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

bool ValidSlotSize(uint64_t s) {
  return s >= kMinSlot && s <= kMaxSlot && s % 4096 == 0;
}

// Appends a length-prefixed string at *p.
char* PutBytes(char* p, absl::string_view s) {
  PutU32(p, static_cast<uint32_t>(s.size()));
  if (!s.empty()) std::memcpy(p + 4, s.data(), s.size());
  return p + 4 + s.size();
}

// Reads a length-prefixed string from [*p, end).
bool GetBytes(const char** p, const char* end, std::string* out) {
  if (end - *p < 4) return false;
  uint32_t n = GetU32(*p);
  *p += 4;
  if (static_cast<uint64_t>(end - *p) < n) return false;
  out->assign(*p, n);
  *p += n;
  return true;
}

// Parses one slot. On success stores the sequence and record; otherwise
// stores why the slot was rejected.
bool ParseSlot(const char* slot, uint32_t slot_size, uint64_t* seq,
               ReplicaPosition* rec, std::string* why) {
  bool zeros = true;
  for (size_t i = 0; i < kHeaderSize; ++i) {
    if (slot[i] != 0) {
      zeros = false;
      break;
    }
  }
  if (zeros) {
    *why = "empty (zeros)";
    return false;
  }
  if (std::memcmp(slot, kMagic, sizeof(kMagic)) != 0) {
    *why = "bad magic";
    return false;
  }
  uint32_t len = GetU32(slot + kLenOffset);
  if (len > slot_size - kHeaderSize) {
    *why = absl::StrCat("payload length ", len, " does not fit the slot");
    return false;
  }
  uint32_t crc = Crc32(slot + kLenOffset, kHeaderSize - kLenOffset + len);
  if (crc != GetU32(slot + kCrcOffset)) {
    *why = "checksum mismatch (torn or corrupt record)";
    return false;
  }
  if (GetU32(slot + kSlotSizeOffset) != slot_size) {
    *why = absl::StrCat("slot size field ", GetU32(slot + kSlotSizeOffset),
                        " but the file's slots are ", slot_size, " bytes");
    return false;
  }
  if (GetU32(slot + kVersionOffset) != kVersion) {
    *why = absl::StrCat("unsupported version ", GetU32(slot + kVersionOffset));
    return false;
  }
  *seq = GetU64(slot + kSeqOffset);
  if (*seq == 0) {
    *why = "sequence number 0";
    return false;
  }
  const char* p = slot + kHeaderSize;
  const char* end = p + len;
  ReplicaPosition r;
  bool ok = end - p >= 16;
  if (ok) {
    r.source_pos = GetU64(p);
    r.relay_pos = GetU64(p + 8);
    p += 16;
  }
  ok = ok && GetBytes(&p, end, &r.source_file) &&
       GetBytes(&p, end, &r.relay_file) &&
       GetBytes(&p, end, &r.executed_gtids) && end - p >= 4;
  if (ok) {
    uint32_t n = GetU32(p);
    p += 4;
    // Each field takes at least 8 bytes: bound n before reserving.
    ok = n <= static_cast<uint64_t>(end - p) / 8;
    for (uint32_t i = 0; ok && i < n; ++i) {
      std::pair<std::string, std::string> kv;
      ok = GetBytes(&p, end, &kv.first) && GetBytes(&p, end, &kv.second);
      if (ok) r.fields.push_back(std::move(kv));
    }
  }
  if (!ok || p != end) {
    *why = absl::StrCat("malformed payload at byte ", p - slot);
    return false;
  }
  *rec = std::move(r);
  return true;
}


}  // namespace

size_t PositionStore::RecordSize(const ReplicaPosition& pos) {
  size_t n = kHeaderSize + 16 + 4 + pos.source_file.size() + 4 +
             pos.relay_file.size() + 4 + pos.executed_gtids.size() + 4;
  for (const auto& kv : pos.fields) n += 8 + kv.first.size() + kv.second.size();
  return n;
}

PositionStore::PositionStore(std::string path,
                             const PositionStoreOptions& options)
    : path_(std::move(path)),
      options_(options),
      fs_(options.file_system != nullptr ? options.file_system
                                         : io::FileSystem::Default()) {}

PositionStore::~PositionStore() {
  if (!closed_) {
    // Errors are lost here, as documented; Close() reports them.
    Close().IgnoreError();
  }
}

namespace {

// Both slots of the store at `path`, read through `fs` (opened for reading
// only; nothing is written or synced): which are valid, their records, and
// the newest valid one. Errors as Open's (no valid record: DataLoss).
struct StoreSlots {
  uint32_t slot_size = 0;
  uint64_t seq[2] = {0, 0};
  ReplicaPosition rec[2];
  bool valid[2] = {false, false};
  int newest = 0;
  std::string note;  // why a slot was rejected ("" if both are valid)
};

absl::StatusOr<StoreSlots> ReadSlots(io::FileSystem* fs, const std::string& path) {
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs->FileSize(path));
  if (size % 2 != 0 || !ValidSlotSize(size / 2)) {
    return absl::DataLossError(absl::StrCat(
        "position store ", path, ": file size ", size,
        " is not two slots of a multiple of 4096 bytes (truncated, extended "
        "or not a position store)"));
  }
  StoreSlots out;
  out.slot_size = static_cast<uint32_t>(size / 2);
  std::string content(size, '\0');
  {
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> r, fs->OpenReadable(path));
    size_t got = 0;
    BINLOG_RETURN_IF_ERROR(r->Read(0, size, &content[0], &got));
    if (got != size) {
      return absl::DataLossError(absl::StrCat("position store ", path, ": read ", got, " of ",
                                              size, " bytes (file truncated?)"));
    }
  }
  std::string why[2];
  for (int i = 0; i < 2; ++i) {
    out.valid[i] = ParseSlot(content.data() + i * out.slot_size, out.slot_size, &out.seq[i],
                             &out.rec[i], &why[i]);
  }
  if (!out.valid[0] && !out.valid[1]) {
    return absl::DataLossError(absl::StrCat("position store ", path,
                                            ": no valid record: slot 0: ", why[0],
                                            "; slot 1: ", why[1]));
  }
  out.newest = !out.valid[1] ? 0 : !out.valid[0] ? 1 : (out.seq[1] > out.seq[0] ? 1 : 0);
  for (int i = 0; i < 2; ++i) {
    if (!out.valid[i]) out.note = absl::StrCat("slot ", i, ": ", why[i]);
  }
  return out;
}

}  // namespace

absl::StatusOr<ReplicaPosition> PositionStore::ReadDurable(const std::string& path,
                                                           io::FileSystem* fs) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  BINLOG_ASSIGN_OR_RETURN(bool exists, fs->Exists(path));
  if (!exists) {
    return absl::NotFoundError(absl::StrCat("position store ", path, ": no such file"));
  }
  BINLOG_ASSIGN_OR_RETURN(StoreSlots slots, ReadSlots(fs, path));
  // Two valid records: the older one is the durable one (the newer slot
  // is written only after the older one's sync, and may not be synced
  // yet). One: the durable one (the other is a torn or never-made write).
  int pick = slots.newest;
  if (slots.valid[0] && slots.valid[1]) pick = 1 - slots.newest;
  return std::move(slots.rec[pick]);
}

absl::StatusOr<std::unique_ptr<PositionStore>> PositionStore::Open(
    const std::string& path, const PositionStoreOptions& options) {
  if (!ValidSlotSize(options.slot_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("position store ", path, ": slot_size ", options.slot_size,
                     " is not a multiple of 4096 in [4096, 16 MiB]"));
  }
  std::unique_ptr<PositionStore> store(new PositionStore(path, options));
  BINLOG_RETURN_IF_ERROR(store->OpenImpl());
  return store;
}

int64_t PositionStore::NowMicros() const {
  if (options_.now_micros) return options_.now_micros();
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t PositionStore::Serialize(const ReplicaPosition& pos, uint64_t seq) {
  char* base = &buf_[0];
  char* p = base + kHeaderSize;
  PutU64(p, pos.source_pos);
  PutU64(p + 8, pos.relay_pos);
  p += 16;
  p = PutBytes(p, pos.source_file);
  p = PutBytes(p, pos.relay_file);
  p = PutBytes(p, pos.executed_gtids);
  PutU32(p, static_cast<uint32_t>(pos.fields.size()));
  p += 4;
  for (const auto& kv : pos.fields) {
    p = PutBytes(p, kv.first);
    p = PutBytes(p, kv.second);
  }
  size_t len = static_cast<size_t>(p - base);
  std::memcpy(base, kMagic, sizeof(kMagic));
  PutU32(base + kLenOffset, static_cast<uint32_t>(len - kHeaderSize));
  PutU64(base + kSeqOffset, seq);
  PutU32(base + kSlotSizeOffset, slot_size_);
  PutU32(base + kVersionOffset, kVersion);
  PutU32(base + kCrcOffset, Crc32(base + kLenOffset, len - kLenOffset));
  return len;
}

absl::Status PositionStore::Create() {
  slot_size_ = options_.slot_size;
  buf_.assign(slot_size_, '\0');
  buf_len_ = Serialize(ReplicaPosition(), 1);
  std::string tmp = path_ + ".tmp";
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                          fs_->OpenWritable(tmp, io::OpenMode::kCreateOrTruncate,
                                            options_.file_mode));
  // Both slots are written out (the record, then zeros), not left as a hole
  // by a truncate: the first write into a hole allocates blocks, which makes
  // that update's fdatasync a metadata (journal) commit too.
  std::string image(2ull * slot_size_, '\0');
  std::memcpy(&image[0], buf_.data(), buf_len_);
  absl::Status s = f->Write(0, image);
  if (s.ok()) s = f->Sync();
  absl::Status c = f->Close();
  if (s.ok()) s = c;
  BINLOG_RETURN_IF_ERROR(s);
  BINLOG_RETURN_IF_ERROR(fs_->Rename(tmp, path_));
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::Directory> dir,
                          fs_->OpenDirectory(io::DirName(path_)));
  return dir->Sync();
}

absl::Status PositionStore::OpenImpl() {
  BINLOG_ASSIGN_OR_RETURN(bool exists, fs_->Exists(path_));
  if (!exists) {
    if (!options_.create_if_missing) {
      return absl::NotFoundError(
          absl::StrCat("position store ", path_, ": no such file"));
    }
    BINLOG_RETURN_IF_ERROR(Create());
  }
  BINLOG_ASSIGN_OR_RETURN(StoreSlots slots, ReadSlots(fs_, path_));
  slot_size_ = slots.slot_size;
  const int pick = slots.newest;
  open_note_ = std::move(slots.note);
  recovered_ = std::move(slots.rec[pick]);
  durable_slot_ = pick;
  seq_ = durable_seq_ = slots.seq[pick];

  BINLOG_ASSIGN_OR_RETURN(file_,
                          fs_->OpenWritable(path_, io::OpenMode::kOpenExisting));
  absl::Status s = file_->Sync();  // see the file comment
  if (!s.ok()) return Poison(s);
  stats_.syncs++;
  buf_.assign(slot_size_, '\0');
  buf_len_ = 0;
  pending_write_ = false;
  last_sync_us_ = options_.sync_interval_ms > 0 ? NowMicros() : 0;
  return absl::OkStatus();
}

absl::Status PositionStore::Poison(absl::Status s) {
  if (error_.ok()) error_ = s;
  return s;
}

absl::Status PositionStore::CheckUsable() const {
  if (closed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("position store ", path_, " is closed"));
  }
  if (!error_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("position store ", path_,
                     " failed earlier; reopen it: ", error_.ToString()));
  }
  return absl::OkStatus();
}

absl::Status PositionStore::WritePending() {
  uint64_t offset = uint64_t(1 - durable_slot_) * slot_size_;
  absl::Status s = file_->Write(offset, absl::string_view(buf_.data(), buf_len_));
  if (!s.ok()) return Poison(s);
  pending_write_ = false;
  stats_.writes++;
  return absl::OkStatus();
}

absl::Status PositionStore::SyncNow() {
  if (pending_write_) BINLOG_RETURN_IF_ERROR(WritePending());
  if (seq_ == durable_seq_) return absl::OkStatus();
  absl::Status s = file_->Sync();
  if (!s.ok()) return Poison(s);  // never retried: see io/file_system.h
  stats_.syncs++;
  durable_slot_ = 1 - durable_slot_;
  durable_seq_ = seq_;
  updates_since_sync_ = 0;
  if (options_.sync_interval_ms > 0) last_sync_us_ = NowMicros();
  return absl::OkStatus();
}

absl::Status PositionStore::Update(const ReplicaPosition& pos) {
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  size_t need = RecordSize(pos);
  if (need > slot_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("position store ", path_, ": record of ", need,
                     " bytes does not fit a slot of ", slot_size_, " bytes"));
  }
  buf_len_ = Serialize(pos, ++seq_);
  pending_write_ = true;
  stats_.updates++;
  ++updates_since_sync_;
  if (options_.write_every_update) BINLOG_RETURN_IF_ERROR(WritePending());
  bool due = options_.sync_every_updates > 0 &&
             updates_since_sync_ >= options_.sync_every_updates;
  if (!due && options_.sync_interval_ms > 0) {
    due = NowMicros() - last_sync_us_ >=
          int64_t{options_.sync_interval_ms} * 1000;
  }
  return due ? SyncNow() : absl::OkStatus();
}

absl::Status PositionStore::Flush() {
  BINLOG_RETURN_IF_ERROR(CheckUsable());
  return SyncNow();
}

absl::Status PositionStore::Close() {
  if (closed_) {
    return absl::FailedPreconditionError(
        absl::StrCat("position store ", path_, " is closed"));
  }
  absl::Status s = error_.ok() ? SyncNow() : CheckUsable();
  closed_ = true;
  if (file_ != nullptr) {
    absl::Status c = file_->Close();
    if (s.ok()) s = c;
    file_.reset();
  }
  return s;
}

}  // namespace binlog
