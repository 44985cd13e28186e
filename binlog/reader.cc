// Reader: validates and returns events across the files of a log.
//
// Design notes.
// - File bytes come through an io::SequentialReader: positioned reads of
//   ReaderOptions::buffer_size windows, SEQUENTIAL/WILLNEED hints, and with
//   ReaderOptions::prefetch the next window read by a helper thread while
//   this one is validated. An event that straddles two windows or is larger
//   than a window is assembled without reading the file twice.
// - It never reads past LogSource::Limit(): for the active file of a live
//   log that is the end the writer published, which is always an event
//   boundary, so a partial event there means corruption, not "wait".
// - For files at rest the end of the file is the end. A partial event or
//   zeros at the end of a file with the in-use flag set is what a crash (or
//   a preallocated tail) leaves: recorded as a TornTail, not an error.

#include "binlog/reader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "binlog/checksum.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log_source.h"
#include "binlog/maria_encryption.h"
#include "binlog/reader_buffers.h"
#include "binlog/status_macros.h"
#include "binlog/tail_ring.h"

namespace binlog {
namespace internal {
namespace {

// A fixed list of files at rest.
class StaticSource final : public LogSource {
 public:
  explicit StaticSource(std::vector<std::pair<uint64_t, std::string>> files)
      : files_(std::move(files)) {}

  uint64_t FirstFile() override {
    return files_.empty() ? 0 : files_.front().first;
  }
  uint64_t NextFile(uint64_t n) override {
    for (size_t i = 0; i + 1 < files_.size(); ++i) {
      if (files_[i].first == n) return files_[i + 1].first;
    }
    return 0;
  }
  std::string FileName(uint64_t n) override {
    return io::BaseName(FilePath(n));
  }
  std::string FilePath(uint64_t n) override {
    for (const auto& f : files_) {
      if (f.first == n) return f.second;
    }
    return std::string();
  }
  uint64_t Limit(uint64_t) override { return kNoLimit; }
  bool live() const override { return false; }
  absl::Status Wait(uint64_t, uint64_t, absl::Time) override {
    return absl::OutOfRangeError("files at rest do not grow");
  }
  bool Pin(uint64_t n) override { return !FilePath(n).empty(); }
  void Unpin(uint64_t) override {}

 private:
  std::vector<std::pair<uint64_t, std::string>> files_;
};

}  // namespace
}  // namespace internal

namespace {

constexpr size_t kMinBuffer = 64 << 10;
constexpr size_t kMaxBuffer = 64 << 20;

bool AllZero(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

}  // namespace

Reader::Reader(std::shared_ptr<internal::LogSource> source,
               const ReaderOptions& o, io::FileSystem* fs)
    : source_(std::move(source)), options_(o), fs_(fs) {
  source_->ReaderOpened();
  options_.buffer_size =
      std::min(std::max(options_.buffer_size, kMinBuffer), kMaxBuffer);
  io::SequentialReaderOptions so;
  so.window = options_.buffer_size;
  so.prefetch = options_.prefetch;
  so.drop_behind = options_.drop_behind;
  buffers_ = std::make_unique<Buffers>();
  buffers_->seq = std::make_unique<io::SequentialReader>(so);
  ring_ = source_->Ring();
  if (ring_ != nullptr) {
    ring_slot_ = ring_->Register();
    if (ring_slot_ < 0) ring_ = nullptr;  // all slots taken: the file only
  }
}

io::SequentialReaderStats Reader::io_stats() const {
  return buffers_->seq->stats();
}

Reader::~Reader() {
  if (ring_ != nullptr) ring_->Unregister(ring_slot_);
  buffers_->seq->Reset(nullptr);  // waits for a prefetch of file_
  if (file_ != nullptr) source_->Unpin(file_number_);
  source_->ReaderClosed();
}

absl::StatusOr<std::unique_ptr<Reader>> Reader::OpenFiles(
    const std::vector<std::string>& paths, const ReaderOptions& options,
    io::FileSystem* fs) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  std::vector<std::pair<uint64_t, std::string>> files;
  for (size_t i = 0; i < paths.size(); ++i) files.emplace_back(i + 1, paths[i]);
  auto src = std::make_shared<internal::StaticSource>(std::move(files));
  return std::unique_ptr<Reader>(new Reader(std::move(src), options, fs));
}

absl::StatusOr<std::unique_ptr<Reader>> Reader::OpenDirectory(
    const std::string& dir, const std::string& basename_in,
    const ReaderOptions& options, io::FileSystem* fs) {
  if (fs == nullptr) fs = io::FileSystem::Default();
  std::string basename = basename_in;
  BINLOG_ASSIGN_OR_RETURN(std::vector<std::string> names,
                          fs->ListDirectory(dir));
  std::sort(names.begin(), names.end());
  if (basename.empty()) {
    std::vector<std::string> indexes;
    for (const auto& n : names) {
      if (n.size() > 6 && n.compare(n.size() - 6, 6, ".index") == 0) {
        indexes.push_back(n.substr(0, n.size() - 6));
      }
    }
    if (indexes.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          dir, ": several index files (", absl::StrJoin(indexes, ", "),
          "); name the basename"));
    }
    if (indexes.size() == 1) {
      basename = indexes[0];
    } else {
      std::vector<std::string> bases;
      for (const auto& n : names) {
        size_t dot = n.rfind('.');
        uint64_t num;
        if (dot != std::string::npos && dot > 0 &&
            ParseBinlogFileName(n.substr(0, dot), n, &num)) {
          std::string b = n.substr(0, dot);
          if (std::find(bases.begin(), bases.end(), b) == bases.end()) {
            bases.push_back(b);
          }
        }
      }
      if (bases.empty()) {
        return absl::NotFoundError(
            absl::StrCat(dir, ": no binlog files (<basename>.NNNNNN)"));
      }
      if (bases.size() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            dir, ": binlog files of several basenames (",
            absl::StrJoin(bases, ", "), "); name the basename"));
      }
      basename = bases[0];
    }
  }
  std::vector<uint64_t> numbers;
  auto index = ReadIndex(fs, dir, basename);
  if (index.ok()) {
    numbers = std::move(*index);
  } else if (absl::IsNotFound(index.status())) {
    for (const auto& n : names) {
      uint64_t num;
      if (ParseBinlogFileName(basename, n, &num)) numbers.push_back(num);
    }
    std::sort(numbers.begin(), numbers.end());
    if (numbers.empty()) {
      return absl::NotFoundError(absl::StrCat(
          dir, ": no index and no files ", basename, ".NNNNNN"));
    }
  } else {
    return index.status();
  }
  std::vector<std::pair<uint64_t, std::string>> files;
  for (uint64_t n : numbers) {
    std::string path = io::JoinPath(dir, BinlogFileName(basename, n));
    BINLOG_ASSIGN_OR_RETURN(bool exists, fs->Exists(path));
    if (!exists) {
      return absl::NotFoundError(absl::StrCat(
          "the index of ", dir, " names ", BinlogFileName(basename, n),
          ", which does not exist"));
    }
    files.emplace_back(n, std::move(path));
  }
  auto src = std::make_shared<internal::StaticSource>(std::move(files));
  return std::unique_ptr<Reader>(new Reader(std::move(src), options, fs));
}

absl::Status Reader::Corrupt(uint64_t offset, absl::string_view what) {
  pos_ = offset;
  sticky_ = absl::DataLossError(
      absl::StrCat(file_name_, ": offset ", offset, ": ", what));
  return sticky_;
}

absl::Status Reader::Fill(uint64_t offset, size_t need, uint64_t limit,
                          absl::string_view* out) {
  // A short view: the limit (the published end) or the end of the file.
  // Bytes missing below a finite limit are DataLoss from the SequentialReader
  // (the file was truncated under the reader).
  SetWindowLimit(limit);
  return buffers_->seq->Peek(offset, need, out);
}

uint64_t Reader::ReadableEnd() {
  // The end loaded last stays valid below it: a file's readable end only
  // grows (0, then published ends, then kNoLimit once the file is
  // complete), and every published end is an event boundary, so an event
  // that starts below the cached end also ends at or before it. The shared
  // word the writer stores once per group (LiveLog::published_) is loaded
  // again only when the reader has reached the cached end, not once per
  // event: with 64 tailing readers and the writer publishing a group every
  // ~100 us, the per-event load of that line (and the virtual call) showed
  // as the hottest instruction of the decoded reader's limit check
  // (benchmarks/README.md, "Round three: tailing readers").
  if (pos_ >= limit_) limit_ = source_->Limit(file_number_);
  return limit_;
}

bool Reader::RingAt(uint64_t limit) {
  if (ring_ == nullptr) return false;
  // Views of at most a quarter of the ring: the pin moves forward at
  // least that often, so a reader that keeps up never holds bytes the
  // writer needs back.
  ring_view_ = ring_->View(
      ring_slot_, file_number_, pos_,
      limit == internal::kNoLimit ? ~uint64_t{0} : limit,
      ring_->capacity() / 4);
  ring_off_ = pos_;
  return !ring_view_.empty();
}

void Reader::DropRingView() {
  ring_view_ = absl::string_view();
  if (ring_ != nullptr) ring_->Unpin(ring_slot_);
}

void Reader::SetWindowLimit(uint64_t limit) {
  const uint64_t l = limit == internal::kNoLimit ? io::kReadToEof : limit;
  io::SequentialReader* seq = buffers_->seq.get();
  if (seq->limit() != l) seq->SetLimit(l);
}

absl::Status Reader::OpenFile(uint64_t number) {
  DropRingView();
  if (!source_->Pin(number)) {
    return absl::NotFoundError(absl::StrCat(
        "binlog file ", source_->FileName(number), " is no longer in the log"));
  }
  auto f = fs_->OpenReadable(source_->FilePath(number));
  if (!f.ok()) {
    source_->Unpin(number);
    return f.status();
  }
  // Waits for a prefetch of the old file before it is closed; advises
  // SEQUENTIAL on the new one.
  buffers_->seq->Reset(f->get(), source_->Limit(number));
  if (file_ != nullptr) source_->Unpin(file_number_);
  file_ = std::move(*f);
  file_number_ = number;
  file_name_ = source_->FileName(number);
  file_done_ = false;
  decrypting_ = false;
  written_here_ = source_->WrittenHere(number);
  pos_ = 0;
  limit_ = 0;
  return ReadFormatDescription();
}

absl::Status Reader::ReadFormatDescription() {
  uint64_t limit = source_->Limit(file_number_);
  limit_ = limit;
  if (source_->live() && limit == 0) {
    // A rotation lists the new file before it publishes it: nothing of it
    // is readable yet. Caught up, like at the end of a published file; the
    // next Next() reads the header (WaitForMore waits for it).
    need_fde_ = true;
    return absl::OutOfRangeError(absl::StrCat(
        source_->FileName(file_number_), " is not published yet"));
  }
  need_fde_ = false;
  absl::string_view got;
  BINLOG_RETURN_IF_ERROR(Fill(0, kMagicSize + kHeaderSize, limit, &got));
  size_t avail = got.size();
  if (avail >= kMagicSize && std::memcmp(got.data(), "\xfd" "bin", 4) == 0) {
    // Read without a decrypting file system (binlog/keyring.h).
    return absl::FailedPreconditionError(absl::StrCat(
        file_name_, ": encrypted binlog file (MySQL binlog_encryption): "
        "reading it needs the keyring (Options::keyring, "
        "NewDecryptingFileSystem, binlogtool --keyring_file)"));
  }
  if (avail < kMagicSize ||
      std::memcmp(got.data(), kBinlogMagic, kMagicSize) != 0) {
    return Corrupt(0, "not a binlog file (no binlog magic fe 62 69 6e)");
  }
  if (avail < kMagicSize + kHeaderSize) {
    return Corrupt(kMagicSize, "file ends before its Format_description event");
  }
  EventHeader h = DecodeHeader(got.substr(kMagicSize, kHeaderSize));
  if (h.type == kStartEventV3) {
    // MySQL 3.23 (binlog v1, 13-byte headers) and 4.0-4.1 (v3; v2 in
    // 4.0.0-4.0.1) start their files with a Start_v3 event, whose body
    // begins with the binlog version: after 13 header bytes in v1, after
    // 19 in v2 and v3. Not damage: a format the library does not read.
    BINLOG_RETURN_IF_ERROR(Fill(kMagicSize, kHeaderSize + 2, limit, &got));
    uint16_t version = 0;
    if (got.size() >= kHeaderSize + 2) {
      const uint16_t v3 = LoadLe16(got.data() + kHeaderSize);
      const uint16_t v1 = LoadLe16(got.data() + 13);
      version = (v3 == 2 || v3 == 3) ? v3 : v1 == 1 ? 1 : v3;
    }
    return absl::UnimplementedError(absl::StrCat(
        file_name_, ": unsupported binlog version ", version,
        " (a Start_v3 event opens the file: MySQL 3.23-4.x; the library "
        "reads binlog v4, MySQL 5.0 and later, MariaDB)"));
  }
  if (h.type != kFormatDescriptionEvent) {
    return Corrupt(kMagicSize, absl::StrCat("first event is type ", h.type,
                                            ", not FORMAT_DESCRIPTION_EVENT"));
  }
  if (h.event_size < kFdePostHeaderOffset || h.event_size > kMaxFormatDescriptionSize) {
    return Corrupt(kMagicSize, absl::StrCat("Format_description event_size ",
                                            h.event_size, " out of bounds"));
  }
  BINLOG_RETURN_IF_ERROR(Fill(kMagicSize, h.event_size, limit, &got));
  avail = got.size();
  if (avail < h.event_size) {
    return Corrupt(kMagicSize, "file ends inside its Format_description event");
  }
  absl::string_view ev = got;
  auto fd = DecodeFormatDescription(ev);
  if (!fd.ok()) return Corrupt(kMagicSize, fd.status().message());
  fde_ = std::move(*fd);
  has_checksums_ = fde_.has_checksums();
  if (has_checksums_ && options_.checksum_mode == ChecksumMode::kVerify &&
      !EventChecksumMatches(ev)) {
    return Corrupt(kMagicSize, "Format_description checksum mismatch");
  }
  pos_ = kMagicSize;
  fde_pending_return_ = true;
  return absl::OkStatus();
}

absl::Status Reader::Next(Event* ev) {
  if (!sticky_.ok()) return sticky_;
  if (in_payload_) return NextInPayload(ev);
  const bool trust = !options_.verify_published_checksums;
  if (NextInRingView(ev, trust)) return absl::OkStatus();
  return ReadEvent(ev, options_.payloads == PayloadMode::kDecoded,
                   options_.checksum_mode, trust);
}

bool Reader::LogPosOk(uint32_t log_pos, uint16_t flags, uint8_t type,
                      uint64_t end) const {
  return !options_.check_log_pos || fde_.relay_log ||
         log_pos == static_cast<uint32_t>(end) ||
         (flags & kFlagArtificial) != 0 ||
         (log_pos == 0 && LogPosMayBeZero(fde_, type));
}

bool Reader::NextInRingView(Event* ev, bool trust_written_here) {
  // The common case of a caught-up reader: the next event lies whole in
  // the ring view it holds, and is one ReadEvent would return as it is.
  // Anything else (the view's end, a checksum to verify, an event that
  // changes how the file is read, a header ReadEvent would refuse) goes
  // to ReadEvent, which decides and reports. The view lies below the
  // readable end the reader loaded, so no limit is checked here.
  if (ring_view_.empty() || need_fde_ || file_done_ || decrypting_ ||
      fde_pending_return_ || pos_ < ring_off_) {
    return false;
  }
  if (has_checksums_ && options_.checksum_mode != ChecksumMode::kSkip &&
      !(trust_written_here && written_here_)) {
    return false;
  }
  const uint64_t d = pos_ - ring_off_;
  if (d + kHeaderSize > ring_view_.size()) return false;
  const char* p = ring_view_.data() + d;
  const uint32_t size = LoadLe32(p + kEventSizeOffset);
  const size_t min_size = kHeaderSize + (has_checksums_ ? kChecksumSize : 0);
  if (size < min_size || size > ring_view_.size() - d) return false;
  const uint8_t type = static_cast<uint8_t>(p[kTypeOffset]);
  switch (type) {
    case kFormatDescriptionEvent:
    case kRotateEvent:
    case kMariaStartEncryptionEvent:
    case kTransactionPayloadEvent:
      return false;
    default:
      break;
  }
  const uint64_t end = pos_ + size;
  if (!LogPosOk(LoadLe32(p + kLogPosOffset), LoadLe16(p + kFlagsOffset), type,
                end)) {
    return false;
  }
  ev->data = absl::string_view(p, size);
  DecodeHeaderInto(p, &ev->header);
  ev->file_number = file_number_;
  ev->offset = pos_;
  ev->end_offset = end;
  ev->checksum = ChecksumState::kNone;
  ev->file_has_checksums = has_checksums_;
  ev->from_payload = false;
  pos_ = end;
  return true;
}

absl::Status Reader::ReadEvent(Event* ev, bool expand,
                               ChecksumMode checksum_mode,
                               bool trust_written_here) {
  if (!started_) {
    uint64_t first =
        options_.start_file != 0 ? options_.start_file : source_->FirstFile();
    if (first == 0) return absl::OutOfRangeError("the log has no files");
    BINLOG_RETURN_IF_ERROR(OpenFile(first));
    started_ = true;
    if (options_.start_offset > kMagicSize) {
      fde_pending_return_ = false;
      pos_ = options_.start_offset;
    }
  }
  for (;;) {
    if (need_fde_) BINLOG_RETURN_IF_ERROR(ReadFormatDescription());
    if (file_done_) {
      uint64_t next = source_->NextFile(file_number_);
      if (next == 0) {
        return absl::OutOfRangeError(absl::StrCat(
            "end of the log at ", file_name_, ":", pos_));
      }
      BINLOG_RETURN_IF_ERROR(OpenFile(next));
      continue;
    }
    uint64_t limit = ReadableEnd();
    // Most events lie inside the current window: two inline checks, no
    // Peek (io/sequential_reader.h InWindow).
    io::SequentialReader* seq = buffers_->seq.get();
    SetWindowLimit(limit);
    // Then the ring (a caught-up reader of a live log), and only then a
    // read of the file.
    absl::string_view got = InRing(pos_, kHeaderSize);
    bool header_from_ring = !got.empty();
    bool ring_tried = false;  // RingAt at most once per event
    if (got.empty()) got = seq->InWindow(pos_, kHeaderSize);
    if (got.empty()) {
      ring_tried = true;
      if (RingAt(limit)) {
        got = InRing(pos_, kHeaderSize);
        header_from_ring = !got.empty();
      }
    }
    if (got.empty()) {
      DropRingView();
      BINLOG_RETURN_IF_ERROR(seq->Peek(pos_, kHeaderSize, &got));
    }
    size_t avail = got.size();
    bool from_ring = false;
    if (avail == 0) {
      if (limit == internal::kNoLimit) {
        file_done_ = true;  // the file ends on an event boundary
        continue;
      }
      limit_ = source_->Limit(file_number_);
      if (limit_ != limit) continue;  // just closed
      return absl::OutOfRangeError(absl::StrCat(
          "no more events visible at ", file_name_, ":", pos_));
    }
    const char* p = got.data();
    if (avail < kHeaderSize) {
      if (limit != internal::kNoLimit) {
        return Corrupt(pos_, "published end is not an event boundary");
      }
      if (fde_.in_use || AllZero(p, avail)) {
        TornTail t{file_name_, pos_, avail, AllZero(p, avail), fde_.in_use,
                   false, absl::StrCat("file ends inside an event header (",
                                avail, " of 19 bytes)")};
        torn_tails_.push_back(std::move(t));
        file_done_ = true;
        continue;
      }
      return Corrupt(pos_, absl::StrCat("file ends inside an event header (",
                                        avail, " of 19 bytes)"));
    }
    if (AllZero(p, kHeaderSize)) {
      if (limit != internal::kNoLimit) {
        return Corrupt(pos_, "zero bytes where an event header should be");
      }
      // The unused tail of a preallocated file, or zeros a crash left.
      BINLOG_ASSIGN_OR_RETURN(uint64_t size, file_->Size());
      torn_tails_.push_back(TornTail{
          file_name_, pos_, size > pos_ ? size - pos_ : 0, true, fde_.in_use,
          false, "zero bytes where an event header should be"});
      file_done_ = true;
      continue;
    }
    EventHeader h = DecodeHeader(absl::string_view(p, kHeaderSize));
    size_t min_size = kHeaderSize + (has_checksums_ ? kChecksumSize : 0);
    if (h.event_size < min_size) {
      return Corrupt(pos_, absl::StrCat("event_size ", h.event_size,
                                        " is below the minimum ", min_size));
    }
    if (h.event_size > kMaxEventSize) {
      return Corrupt(pos_, absl::StrCat("event_size ", h.event_size,
                                        " is above the maximum ", kMaxEventSize));
    }
    // Never grow the buffer to a size the file cannot supply: a short file
    // (or a hostile header) claiming a huge event must not allocate it.
    uint64_t can_supply = limit;
    if (h.event_size > options_.buffer_size) {
      BINLOG_ASSIGN_OR_RETURN(uint64_t file_size, file_->Size());
      can_supply = std::min<uint64_t>(limit, file_size);
    }
    if (can_supply != internal::kNoLimit && pos_ + h.event_size > can_supply) {
      avail = can_supply > pos_ ? static_cast<size_t>(std::min<uint64_t>(
                                      can_supply - pos_, h.event_size))
                                : 0;
      got = absl::string_view();
    } else {
      got = InRing(pos_, h.event_size);
      if (got.empty() && !ring_view_.empty() && !ring_tried) {
        ring_tried = true;
        if (RingAt(limit)) got = InRing(pos_, h.event_size);  // past the view's end
      }
      from_ring = !got.empty();
      if (got.empty()) {
        got = seq->InWindow(pos_, h.event_size);
        if (!got.empty() && !ring_view_.empty()) DropRingView();
      }
      if (got.empty() && !ring_tried) {
        // The file window ends inside this event: a reader that was behind
        // and has come within the ring's reach takes the rest from the
        // ring instead of reading the file on. Once per window, not per
        // event.
        ring_tried = true;
        if (RingAt(limit)) got = InRing(pos_, h.event_size);
        from_ring = !got.empty();
      }
      if (from_ring && !header_from_ring &&
          std::memcmp(p, got.data(), kHeaderSize) != 0) {
        // The header came from the file, the rest from the ring, and they
        // differ: the file's copy was damaged after it was written (the
        // ring holds what the writer wrote). The event is read from the
        // file, whose bytes are verified, not assembled from both.
        from_ring = false;
        got = absl::string_view();
      }
      if (got.empty()) {
        DropRingView();  // across the ring's wrap point or end
        BINLOG_RETURN_IF_ERROR(Fill(pos_, h.event_size, limit, &got));
      }
      avail = got.size();
    }
    if (avail < h.event_size) {
      if (limit != internal::kNoLimit) {
        return Corrupt(pos_, absl::StrCat("event of ", h.event_size,
                                          " bytes crosses the published end"));
      }
      std::string why = absl::StrCat("file ends inside an event (", avail,
                                     " of ", h.event_size, " bytes, type ",
                                     EventTypeName(h.type), ")");
      if (fde_.in_use) {
        torn_tails_.push_back(
            TornTail{file_name_, pos_, avail, false, true, false, why});
        file_done_ = true;
        continue;
      }
      return Corrupt(pos_, why);
    }
    absl::string_view data = got;
    if (decrypting_) {
      // The stored event is encrypted but for its event_size: decrypted
      // here, it is validated and returned as the server built it.
      absl::Status d = buffers_->maria.Decrypt(maria_key_, maria_nonce_,
                                               static_cast<uint32_t>(pos_),
                                               got, &buffers_->decrypted);
      if (!d.ok()) return Corrupt(pos_, d.message());
      data = buffers_->decrypted;
      h = DecodeHeader(data);
    }
    ChecksumState cs = ChecksumState::kNone;
    // Bytes served from the ring (memory this process's writer
    // checksummed and published) are not verified again by each tailing
    // reader unless it asks (ReaderOptions::verify_published_checksums).
    // Bytes read from a file, even a file this process wrote, are:
    // the disk or the page cache may have changed them.
    if (has_checksums_ && checksum_mode != ChecksumMode::kSkip &&
        !(trust_written_here && written_here_ && from_ring)) {
      if (EventChecksumMatches(data)) {
        cs = ChecksumState::kOk;
      } else if (checksum_mode == ChecksumMode::kVerify) {
        return Corrupt(pos_, absl::StrCat("checksum mismatch in ",
                                          EventTypeName(h.type), " event"));
      } else {
        cs = ChecksumState::kBad;
      }
    }
    uint64_t end = pos_ + h.event_size;
    bool is_fde_at_start = pos_ == kMagicSize;
    // A relay log's events carry the source's log_pos, not offsets in this
    // file: the check is off for files whose Format_description has the
    // relay flag, whatever the options say.
    // A relay log written by a MySQL 5.0-5.5 replica has no relay flag: it
    // is recognized by the source's Rotate event that such a replica writes
    // after the file's own Format_description, with log_pos 0 and without
    // the artificial flag (no binlog has a Rotate with log_pos 0). From
    // there the file is read as a relay log.
    if (h.type == kRotateEvent && h.log_pos == 0 && !fde_.relay_log &&
        !(h.flags & kFlagArtificial) && cs != ChecksumState::kBad) {
      fde_.relay_log = true;
    }
    if (cs != ChecksumState::kBad && !LogPosOk(h.log_pos, h.flags, h.type, end)) {
      return Corrupt(pos_, absl::StrCat("log_pos ", h.log_pos,
                                        " does not match the event end ", end));
    }
    if (h.type == kFormatDescriptionEvent && !is_fde_at_start) {
      // A later Format_description (the source's, in a relay log) replaces
      // the file's for the events after it. Whether the file is in use
      // and a relay log stays the file's own (its first Format_description
      // says so; a source's copy is not this file's state).
      auto fd = DecodeFormatDescription(data);
      if (!fd.ok()) return Corrupt(pos_, fd.status().message());
      const bool in_use = fde_.in_use;
      const bool relay_log = fde_.relay_log;
      fde_ = std::move(*fd);
      fde_.in_use = in_use;
      fde_.relay_log = relay_log;
      has_checksums_ = fde_.has_checksums();
    }
    if (fde_pending_return_) fde_pending_return_ = false;
    ev->data = data;
    // The header of `data` (h's bytes) decoded in place, not copied from
    // h: the copy stalls on store forwarding.
    DecodeHeaderInto(data.data(), &ev->header);
    ev->file_number = file_number_;
    ev->offset = pos_;
    ev->end_offset = end;
    ev->checksum = cs;
    ev->file_has_checksums = has_checksums_;
    ev->from_payload = false;
    pos_ = end;
    if (h.type == kMariaStartEncryptionEvent &&
        cs != ChecksumState::kBad && !decrypting_) {
      // MariaDB's encrypt_binlog: every event after this one is encrypted
      // with a key of the server's key management plugin
      // (binlog/maria_encryption.h). The event itself is returned; without
      // the key the reader stops after it.
      auto start = DecodeMariaStartEncryption(
          EventBody(data, has_checksums_));
      if (!start.ok()) return Corrupt(ev->offset, start.status().message());
      auto key = options_.mariadb_binlog_keys.find(kMariaBinlogKeyId);
      if (key != options_.mariadb_binlog_keys.end()) {
        decrypting_ = true;
        maria_key_ = key->second;
        maria_nonce_ = start->nonce;
      } else {
        sticky_ = absl::UnimplementedError(absl::StrCat(
            file_name_, ": offset ", end,
            ": MariaDB-encrypted binlog (encrypt_binlog; Start_encryption "
            "event at offset ", ev->offset, ", key version ",
            start->key_version,
            "): the events after it are encrypted; reading them needs key ",
            kMariaBinlogKeyId, " of the server's file_key_management key "
            "file (ReaderOptions::mariadb_binlog_keys, binlogtool "
            "--mariadb_key_file)"));
      }
    }
    if (h.type == kTransactionPayloadEvent && expand &&
        cs != ChecksumState::kBad) {
      return StartPayload(ev);  // its first inner event, or DataLoss
    }
    // In a relay log, Rotate events of the source (and the Rotate to the
    // source position a replica writes) are ordinary events in the middle
    // of the file; only the relay log's own rotation, which carries the
    // relay flag (MySQL's Rotate_log_event::RELAY_LOG), ends the file.
    if (h.type == kRotateEvent &&
        (!fde_.relay_log || (h.flags & kFlagRelayLog) != 0)) {
      EndFileAtRotate(end, limit);
    }
    return absl::OkStatus();
  }
}

void Reader::EndFileAtRotate(uint64_t end, uint64_t limit) {
  file_done_ = true;
  if (limit != internal::kNoLimit) return;
  // A Rotate event ends its file; anything after it is damage.
  auto size = file_->Size();
  if (size.ok() && *size > end) {
    torn_tails_.push_back(TornTail{
        file_name_, end, *size - end, false, fde_.in_use, /*after_rotate=*/true,
        absl::StrCat(*size - end, " bytes after the Rotate event")});
  }
}

absl::Status Reader::NextBatch(EventBatch* b, const BatchOptions& bo) {
  b->starts.clear();
  b->data = absl::string_view();
  if (!sticky_.ok()) return sticky_;
  if (in_payload_) {
    return absl::FailedPreconditionError(
        "NextBatch: Next() is returning the inner events of a payload; "
        "read them to the payload's end first");
  }
  if (started_ && !need_fde_ && !file_done_ && !fde_pending_return_ &&
      !fde_.relay_log && !decrypting_) {
    bool done = false;
    BINLOG_RETURN_IF_ERROR(FillBatch(b, bo, &done));
    if (done) return absl::OkStatus();
  }
  // One event, validated as Next() validates it, with the batch's
  // checksum rule: a file's first events, the end of a file, zeros, a
  // relay log's events, an event larger than what the window holds, a bad
  // one.
  Event ev;
  BINLOG_RETURN_IF_ERROR(ReadEvent(
      &ev, /*expand=*/false,
      bo.verify_checksums ? ChecksumMode::kVerify : ChecksumMode::kSkip,
      /*trust_written_here=*/false));
  b->data = ev.data;
  b->file_number = ev.file_number;
  b->offset = ev.offset;
  b->file_has_checksums = ev.file_has_checksums;
  b->starts.push_back(0);
  return absl::OkStatus();
}

bool Reader::WholeEventInWindow() {
  absl::string_view h = buffers_->seq->InWindow(pos_, kHeaderSize);
  if (h.empty()) return false;
  const uint32_t size = LoadLe32(h.data() + kEventSizeOffset);
  return size >= kHeaderSize && !buffers_->seq->InWindow(pos_, size).empty();
}

absl::Status Reader::FillBatch(EventBatch* b, const BatchOptions& bo,
                               bool* done) {
  *done = false;
  const uint64_t limit = ReadableEnd();
  io::SequentialReader* seq = buffers_->seq.get();
  SetWindowLimit(limit);
  const size_t cap = bo.max_bytes != 0 ? bo.max_bytes : options_.buffer_size;
  // The events already in the window, in place; if the window holds less
  // than a header at the position, one Peek reads the next window (which
  // then starts at the position, or is assembled across windows: the
  // loop below then finds no whole event and the caller reads one alone).
  // A caught-up reader of a live log takes the events from the ring, in
  // place: no system call, no copy.
  absl::string_view got = RingRest();
  if (got.size() < kHeaderSize && ring_ != nullptr &&
      !WholeEventInWindow() && RingAt(limit)) {
    // Also when the window ends inside the next event: a reader that was
    // behind comes back to the ring as soon as the ring holds its
    // position, not only when a window happens to end between events.
    got = RingRest();
  }
  // Never past the readable end, whatever the ring's own bound says.
  if (limit != internal::kNoLimit && pos_ < limit && got.size() > limit - pos_) {
    got = got.substr(0, static_cast<size_t>(limit - pos_));
  } else if (limit != internal::kNoLimit && pos_ >= limit) {
    got = absl::string_view();
  }
  if (got.size() >= kHeaderSize) {
    got = got.substr(0, std::max(kHeaderSize, std::min(got.size(), cap)));
  } else {
    got = absl::string_view();
    DropRingView();
    size_t in_window = seq->Buffered(pos_);
    if (in_window < kHeaderSize) {
      BINLOG_RETURN_IF_ERROR(Fill(pos_, kHeaderSize, limit, &got));
      if (got.size() < kHeaderSize) return absl::OkStatus();
      in_window = seq->Buffered(pos_);
    }
    if (in_window >= kHeaderSize) {
      BINLOG_RETURN_IF_ERROR(Fill(pos_, std::max(kHeaderSize, std::min(in_window, cap)),
                                  limit, &got));
    }
  }
  const size_t min_size = kHeaderSize + (has_checksums_ ? kChecksumSize : 0);
  const bool verify = bo.verify_checksums && has_checksums_;
  const size_t n = got.size();
  size_t off = 0;
  bool rotate = false;
  while (n - off >= kHeaderSize) {
    const char* p = got.data() + off;
    // The walk from header to header is a chain of dependent loads; ask
    // for the bytes a few events ahead while this one is checked.
    __builtin_prefetch(p + 256);
    const uint32_t size = LoadLe32(p + kEventSizeOffset);
    const uint8_t type = static_cast<uint8_t>(p[kTypeOffset]);
    // Zeros, a bad size, an event past the view, a Format_description or
    // a bad checksum: the batch ends before it (and a batch that would be
    // empty is read by ReadEvent, which reports or records it).
    if (size < min_size || size > kMaxEventSize || size > n - off) break;
    // A Start_encryption event changes how the events after it are read
    // (ReadEvent takes it alone).
    if (type == kFormatDescriptionEvent || type == kMariaStartEncryptionEvent) {
      break;
    }
    // log_pos as Next() checks it: one load, and what tells a torn event
    // (followed by zeros or garbage) from a whole one without its CRC.
    if (!LogPosOk(LoadLe32(p + kLogPosOffset), LoadLe16(p + kFlagsOffset),
                  type, pos_ + off + size)) {
      break;
    }
    if (verify && !EventChecksumMatches(absl::string_view(p, size))) break;
    b->starts.push_back(static_cast<uint32_t>(off));
    off += size;
    if (type == kRotateEvent) {
      rotate = true;
      break;
    }
  }
  if (off == 0) return absl::OkStatus();
  b->data = got.substr(0, off);
  b->file_number = file_number_;
  b->offset = pos_;
  b->file_has_checksums = has_checksums_;
  pos_ += off;
  if (rotate) EndFileAtRotate(pos_, limit);
  *done = true;
  return absl::OkStatus();
}

absl::Status Reader::WaitForMore(absl::Time deadline) {
  if (!source_->live()) return absl::OutOfRangeError("files at rest do not grow");
  return source_->Wait(file_number_, pos_, deadline);
}

}  // namespace binlog
