// Log text made safe as Postfix's msg_* functions make it before any line
// goes out: every byte that is not printable ASCII becomes '?', so that
// text from outside (a sender address, a header line, a remote reply) can
// neither start a new line in the maillog (a newline) nor hide in it (a
// control character).  With smtputf8_enable, a byte from 194 to 254
// followed by continuation bytes (128 to 191) is kept together with all of
// them, as UTF-8; stock does the same, without checking the sequence any
// further.
#pragma once

#include <string>

namespace cqmgr::log {

// Replaces, in place, each byte of `text` from `from` on that stock would
// not log as it is with '?'.  A NUL byte, which cannot occur in stock's
// text (a C string), is replaced as well.
void make_printable(std::string& text, size_t from, bool utf8);

} // namespace cqmgr::log
