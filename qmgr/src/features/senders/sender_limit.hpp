// The value of cqmgr_sender_limits: a sender group's limit, as the admin
// writes it in a table,
//
//   [concurrency=N] [rate=N/PERIOD[,BURST]] [per destination|provider]
//
// in any order, with at least one of concurrency and rate; `per` says what
// the limit counts across (one destination, the default, or one provider)
// and the rate is written as cqmgr_rate_limits' (cluster/rate_spec.hpp:
// `100/min`, `10/s,20`).  Words are separated by blanks; the keywords are
// matched without regard to case.  Pure, for the daemon (sender_groups.*)
// and the fuzzer (qmgr/fuzz/fuzz_sender_limit.cpp).
#pragma once

#include "cqmgr/common/result.hpp"
#include "cqmgr/core/sender.hpp"

#include <string>
#include <string_view>

namespace cqmgr::qmgr {

// Why a value is not a sender limit.
struct SenderLimitError {
    enum class Kind {
        nothing,     // neither concurrency nor rate
        word,        // a word that is none of the above
        duplicate,   // a setting given twice
        concurrency, // concurrency= is not a count of 1 to 1,000,000
        rate,        // rate= is not N/PERIOD[,BURST] (detail says why)
        scope,       // per is not followed by destination or provider
    };
    Kind kind = Kind::nothing;
    std::string word;   // the word at fault, as written (empty for nothing)
    std::string detail; // for rate: the rate parser's words

    // "unknown word \"fast\"", for the warning.
    std::string message() const;
};

// Parses one table value.
Result<core::SenderLimit, SenderLimitError> parse_sender_limit(std::string_view value);

// The limit as the admin would write it back, e.g.
// "concurrency=2 rate=100/60000ms,100 per destination".
std::string sender_limit_text(const core::SenderLimit& limit);

} // namespace cqmgr::qmgr
