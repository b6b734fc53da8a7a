// Splits the bytes a control client sends into request lines, with the
// protocol's limit: a line of more than max_request_bytes (newline
// included) is refused before the rest of it is read.
#pragma once

#include "cqmgr/control/request.hpp"

#include <string>
#include <string_view>

namespace cqmgr::control {

class LineFramer {
  public:
    enum class Status {
        line,      // a complete line is in `line`
        need_more, // no complete line yet: append more bytes
        too_long,  // the current line is over the limit; nothing more comes out
    };

    explicit LineFramer(size_t limit = max_request_bytes) : limit_(limit) {}

    // Adds bytes as they came from the client.
    void append(std::string_view bytes);
    // Takes the next complete line (without its newline and a '\r' before
    // it).  Once too_long is returned, every later call returns it too.
    Status next(std::string& line);
    // Bytes received and not yet returned as lines.
    size_t pending() const { return buf_.size() - start_; }

  private:
    size_t limit_;
    std::string buf_;
    size_t start_ = 0;   // where the next line begins in buf_
    size_t scanned_ = 0; // bytes after start_ known to hold no newline
    bool too_long_ = false;
};

} // namespace cqmgr::control
