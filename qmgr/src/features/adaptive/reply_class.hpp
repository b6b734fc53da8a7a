// What a receiver's deferral or refusal says about the destination, for
// the adaptive limits (docs/admin-guide.md, "Adaptive limits") and the
// destination shares' isolation (a timeout): the DSN
// status and text of a delivery are matched against the admin's rules
// (cqmgr_adaptive_reply_rules) and then the default rules below; the first
// rule that matches gives the class.  A reply no rule names is a hard
// failure when its status is 5.x.x, else "other".
#pragma once

#include "regex_table.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cqmgr::qmgr {

enum class ReplyClass {
    connection_limit, // too many connections from us: stay under that concurrency
    rate_limit,       // too much mail too fast: stay under that rate
    greylist,         // try again later, whatever the rate: no limit
    timeout,          // no answer in time, or a dropped connection: no limit (isolation's strike)
    hard,             // a permanent refusal: no limit
    other,            // none of these
};

// The class's name as rules and logs write it ("connection_limit", ...).
const char* reply_class_name(ReplyClass c);
// The class a rule's result names (case-insensitive, '-' or '_'), if any.
std::optional<ReplyClass> reply_class_from_name(std::string_view name);

// The default rules, a pcre: table (docs/admin-guide.md lists them).
extern const char* const default_reply_rules;

class ReplyClassifier {
  public:
    // `admin_rules`: the admin's table, tried first (results that name no
    // class are warned about and fall through to the default rules).
    explicit ReplyClassifier(std::optional<RegexTable> admin_rules = std::nullopt,
                             const RegexTable::Warn& warn = {});

    // The class of a reply with DSN `status` ("4.7.0") and `text`: the
    // rules see "STATUS TEXT", its first max_subject bytes.  A text seen
    // lately is not matched again (a receiver repeats itself: the same
    // words for every recipient of a delivery, and of the next).  `budget`
    // is charged for each rule that hits its limit; once it is spent, no
    // rule is matched (the class is then that of a reply no rule names).
    ReplyClass classify(std::string_view status, std::string_view text, MatchBudget& budget) const;
    // The same with a budget of its own.
    ReplyClass classify(std::string_view status, std::string_view text) const;

    // Rules that hit a limit so far, the admin's and the defaults.
    uint64_t limit_hits() const;
    // Replies matched against the rules so far (not found among the recent).
    uint64_t matched() const { return matched_; }

  private:
    // How many recent texts' classes are kept (each at most max_subject
    // bytes long).
    static constexpr size_t recent_limit = 256;

    std::optional<RegexTable> admin_;
    RegexTable defaults_;
    RegexTable::Warn warn_;
    mutable std::unordered_map<std::string, ReplyClass> recent_;
    mutable uint64_t matched_ = 0;
};

} // namespace cqmgr::qmgr
