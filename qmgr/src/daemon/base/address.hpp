// Address forms qmgr needs: the quoted external form used in log lines
// (info_log_address_format = external), its inverse, and the VERP sender
// (prefix@origin becomes prefix+user=domain@origin).
#pragma once

#include <string>
#include <string_view>

namespace cqmgr::qmgr {

// Quotes the local part when it is not a plain dot-atom, as RFC 5321 wants:
// john doe@example.com  ->  "john doe"@example.com.  8-bit data is left alone.
std::string quote_local(std::string_view addr);

// Undoes quote_local: "john doe"@example.com -> john doe@example.com.
std::string unquote_local(std::string_view addr);

// The VERP sender for one recipient (its original address when known).
std::string verp_sender(std::string_view sender, std::string_view delims,
                        std::string_view orig_rcpt, std::string_view rcpt);

// `s` with ASCII capitals made small, as Postfix's lowercase() and the C
// locale's tolower() make them (the daemon never sets another locale);
// inline, as it runs for every recipient.
inline std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

} // namespace cqmgr::qmgr
