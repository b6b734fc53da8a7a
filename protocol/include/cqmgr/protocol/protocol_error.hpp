// What a peer sent that Postfix's protocol does not allow, typed by what
// was wrong: the decoders of attribute lists and of replies report it, the
// clients wrap it into their own errors, and its message() is the text the
// warnings show ("expected ..., got ...").
#pragma once

#include <string>

namespace cqmgr::protocol {

struct ProtocolError {
    enum class Kind {
        malformed, // bytes that are not an attribute list, or one over a limit
        truncated, // the bytes end inside a list
        trailing,  // bytes follow the one list expected
        names,     // a list whose attribute names are not the reply's
        number,    // an attribute that should hold a number and does not
    };
    Kind kind = Kind::malformed;
    // What was expected and what came instead.
    std::string text;

    const std::string& message() const { return text; }
};

} // namespace cqmgr::protocol
