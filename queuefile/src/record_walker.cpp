#include "cqmgr/queuefile/record_walker.hpp"

#include "cqmgr/queuefile/size_record.hpp"

#include <limits>

namespace cqmgr::queuefile {

RecordWalker::RecordWalker(int fd, std::string path, WalkOptions options)
    : in_(fd, std::move(path)), options_(options) {}

bool RecordWalker::next(WalkedRecord& out) {
    if (done_) return false;
    out.offset = in_.tell();
    out.pointer_target.reset();
    out.type = in_.get(out.payload);
    if (first_) {
        first_ = false;
        // postcat's plausibility test of the first byte, before anything else.
        if (in_.record_type() >= 0 && !type_in(in_.record_type(), region::envelope)) {
            failure_ = FileError{ErrorKind::unexpected_record, in_.path(), out.offset,
                                 "a queue file, starting with an envelope record type",
                                 "record type byte " + std::to_string(in_.record_type())};
            done_ = true;
            return false;
        }
    }
    if (out.type == rec::error) {
        failure_ = in_.failure();
        done_ = true;
        return false;
    }
    if (out.type == rec::eof) {
        done_ = true;
        if (options_.follow_pointers)
            failure_ = FileError{ErrorKind::missing_end, in_.path(), out.offset,
                                 "more records up to the end record 'E'", "end of file"};
        return false;
    }

    out.segment = segment_;
    switch (segment_) {
    case Segment::envelope:
        out.allowed = type_in(out.type, region::envelope) || out.type == rec::ptr;
        break;
    case Segment::content:
        out.allowed = type_in(out.type, region::content) || out.type == rec::ptr;
        break;
    case Segment::extracted:
        out.allowed = type_in(out.type, region::extracted) || out.type == rec::ptr;
        break;
    }

    switch (out.type) {
    case rec::ptr:
        if (options_.follow_pointers) {
            FileError err;
            out.pointer_target = pointers_.follow(in_, out.payload, out.offset, err);
            if (!out.pointer_target) {
                // Report the record itself; stop before the next one.
                failure_ = err;
                done_ = true;
            }
        }
        break;
    case rec::size:
        if (data_size_ < 0 && data_offset_ < 0) {
            SizeRecord s;
            s.data_size = -1;
            s.data_offset = -1;
            parse_size_record(out.payload, s);
            data_size_ = s.data_size;
            data_offset_ = s.data_offset;
        }
        break;
    case rec::mesg:
        segment_ = Segment::content;
        if (options_.skip_content && data_size_ >= 0 && data_offset_ >= 0) {
            // Insist on progress: a SIZE record that points back would loop.
            if (data_offset_ > std::numeric_limits<int64_t>::max() - data_size_ ||
                data_offset_ + data_size_ <= out.offset) {
                failure_ = FileError{ErrorKind::bad_size, in_.path(), 0,
                                     "a SIZE record whose content end (field 2 + field 1) lies "
                                     "after the message content record at offset " +
                                         std::to_string(out.offset),
                                     std::to_string(data_offset_) + " + " +
                                         std::to_string(data_size_)};
                done_ = true;
                break;
            }
            in_.seek(static_cast<off_t>(data_offset_ + data_size_));
        }
        break;
    case rec::xtra:
        segment_ = Segment::extracted;
        break;
    case rec::end:
        if (options_.follow_pointers) done_ = true;
        break;
    default:
        break;
    }
    return true;
}

} // namespace cqmgr::queuefile
