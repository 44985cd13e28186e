// Reader, PayloadMode::kDecoded: expanding Transaction_payload events.
//
// Kept apart from reader.cc (the file and buffer handling) so that the two
// change independently. Next() calls StartPayload() when it is about to
// return a payload event whose checksum is not known bad, and
// NextInPayload() first while inner events are left.
//
// The whole payload is decoded (decompressed into buffers_->payload, every
// inner event validated: binlog/payload.h) before the first inner event is
// returned. A reader that returned half a transaction and then failed
// would force every consumer to undo the half; this way a damaged payload
// is one DataLoss at the payload's offset and nothing of it. The buffer
// keeps its memory, so a reader stops allocating once it has met its
// largest payload.

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/payload.h"
#include "binlog/reader.h"
#include "binlog/reader_buffers.h"

namespace binlog {

absl::Status Reader::StartPayload(Event* ev) {
  size_t inner = 0;
  absl::Status s = DecodePayload(ev->body(), options_.max_payload_size,
                                 &payload_header_, &buffers_->payload,
                                 &inner);
  if (absl::IsResourceExhausted(s)) {
    // Not damage: the memory for the decompressed events could not be had
    // (a memory limit). Sticky like DataLoss, with its own code.
    buffers_->payload.Release();
    pos_ = ev->offset;
    sticky_ = absl::ResourceExhaustedError(
        absl::StrCat(file_name_, ": offset ", ev->offset, ": ", s.message()));
    return sticky_;
  }
  if (!s.ok()) return Corrupt(ev->offset, s.message());
  payload_event_ = *ev;
  payload_event_.payload_events = static_cast<uint32_t>(inner);
  payload_event_.payload_index = 0;
  payload_next_ = 0;
  in_payload_ = true;
  return NextInPayload(ev);
}

absl::Status Reader::NextInPayload(Event* ev) {
  // DecodePayload validated the tiling: every header is complete and every
  // event_size fits in what is left.
  const char* p = buffers_->payload.data() + payload_next_;
  const uint32_t size = LoadLe32(p + kEventSizeOffset);
  *ev = payload_event_;
  ev->data = absl::string_view(p, size);
  DecodeHeaderInto(p, &ev->header);  // in place: no stalled copy
  ev->file_has_checksums = false;
  ev->from_payload = true;
  ev->payload_index = payload_event_.payload_index++;
  payload_next_ += size;
  if (payload_next_ >= buffers_->payload.size()) in_payload_ = false;
  return absl::OkStatus();
}

}  // namespace binlog
