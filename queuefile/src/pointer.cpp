#include "cqmgr/queuefile/pointer.hpp"

#include "cqmgr/queuefile/c_parse.hpp"

namespace cqmgr::queuefile {

std::optional<int64_t> PointerFollower::follow(RecordStream& in, std::string_view payload, off_t at,
                                               FileError& error) {
    int64_t target = parse_pointer(c_string(payload));
    if (target < 0) {
        error = FileError{ErrorKind::bad_pointer, in.path(), at,
                          "a pointer record payload of blanks and decimal digits",
                          "\"" + escape_bytes(payload) + "\""};
        return std::nullopt;
    }
    if (target == 0) return 0;
    if (target <= last_target_ && ++reverse_jumps_ > max_reverse_jumps) {
        error = FileError{ErrorKind::pointer_loop, in.path(), at,
                          "at most " + std::to_string(max_reverse_jumps) +
                              " backward pointer jumps",
                          "one more, to offset " + std::to_string(target)};
        return std::nullopt;
    }
    in.seek(static_cast<off_t>(target));
    last_target_ = target;
    return target;
}

} // namespace cqmgr::queuefile
