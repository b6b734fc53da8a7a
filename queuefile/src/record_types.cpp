#include "cqmgr/queuefile/record_types.hpp"

namespace cqmgr::queuefile {

const char* segment_name(Segment s) {
    switch (s) {
    case Segment::envelope: return "envelope";
    case Segment::content: return "content";
    case Segment::extracted: return "extracted";
    }
    return "unknown";
}

bool type_in(int type, std::string_view letters) {
    if (type <= 0 || type > 255) return false;
    return letters.find(static_cast<char>(type)) != std::string_view::npos;
}

const char* record_type_name(int type) {
    switch (type) {
    case -1: return "end-of-file";
    case -2: return "error";
    case 'C': return "message_size";
    case 'T': return "message_arrival_time";
    case 'c': return "queue_file_create_time";
    case 'F': return "sender_fullname";
    case 'I': return "content_inspector";
    case 'L': return "content_filter";
    case 'S': return "sender";
    case 'D': return "done_recipient";
    case '/': return "canceled_recipient";
    case 'R': return "recipient";
    case 'O': return "original_recipient";
    case 'W': return "warning_message_time";
    case 'A': return "named_attribute";
    case 'p': return "pointer_record";
    case 'K': return "killed_record";
    case 'M': return "message_content";
    case 'N': return "regular_text";
    case 'w': return "padding";
    case 'X': return "extracted_info";
    case 'r': return "return_receipt";
    case 'e': return "errors_to";
    case 'P': return "priority";
    case 'V': return "verp_delimiters";
    case 'E': return "message_end";
    case '>': return "redirect_to";
    case 'f': return "flags";
    case '<': return "dsn_return_flags";
    case 'i': return "dsn_envelope_id";
    case 'o': return "dsn_original_recipient";
    case 'n': return "dsn_notify_flags";
    default: return "unknown_record_type";
    }
}

const char* record_type_name_in(int type, Segment s) {
    if (type == 'L' && s == Segment::content) return "unterminated_text";
    return record_type_name(type);
}

} // namespace cqmgr::queuefile
