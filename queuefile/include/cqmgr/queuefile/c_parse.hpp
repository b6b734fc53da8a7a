// Text-to-number and text-splitting rules of the C library and of Postfix's
// utility library, reproduced without undefined behaviour, so that every
// queue-file field is read exactly as stock Postfix reads it.
//
// Postfix handles record payloads as C strings: they end at the first NUL.
// c_string() gives that view of a payload.
#pragma once

#include <cstdint>
#include <string_view>

namespace cqmgr::queuefile {

// The payload as Postfix sees it: everything before the first NUL byte.
std::string_view c_string(std::string_view payload);

// isspace() in the C locale, restricted to ASCII (Postfix's ISSPACE).
// Inline: the attribute splitter calls it for every byte of every named
// attribute, some 800 calls for a message received over SMTP.
inline bool c_isspace(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r'); // \t \n \v \f \r
}

// strtol(s, 0, 10) as glibc does it: leading white space, optional sign,
// decimal digits up to the first non-digit; saturates at INT64_MIN/MAX.
int64_t c_atol(std::string_view s);

// atoi(): the strtol() result truncated to int (two's complement wrap).
int c_atoi(std::string_view s);

// Postfix alldig(): non-empty and only decimal digits.
bool all_digits(std::string_view s);

// Postfix rec_goto()'s reading of a pointer payload: leading white space is
// skipped, the rest must be decimal digits only (empty means 0); returns -1
// for anything else, including values that do not fit in off_t.
int64_t parse_pointer(std::string_view payload);

} // namespace cqmgr::queuefile
