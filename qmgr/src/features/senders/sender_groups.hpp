// Which sender group a message is in (cqmgr_sender_limits; the scheduler's
// side is in qmgr/core/src/sender.cpp).
//
// cqmgr_sender_limits is a list of lookup tables in Postfix's syntax:
// inline:, texthash: and static: (read by conf::LookupTables), pcre: and
// regexp: (RegexTable).  It is queried once per message with the sender
// address, then the sender's domain, each key in every table in turn; the
// first answer that is a limit (sender_limit.hpp) wins.  An answer that is
// not is warned about and skipped, as Postfix skips a bad table result.
// The group is the key that answered: the sender address, or its domain
// (lower case), so that each domain (or address) listed, or matched by a
// pattern, has its own allowance.  The null sender is in no group.
#pragma once

#include "any_table.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace cqmgr::qmgr {

class SenderGroups {
  public:
    using Warn = std::function<void(const std::string&)>;

    SenderGroups() = default;
    // Opens the tables (read now: call before the jail).  Throws
    // conf::ConfigError naming a table that cannot be read or whose type
    // is not supported.
    static SenderGroups open(const std::vector<std::string>& maps, Warn warn);

    // True when the parameter names no table: no message has a group.
    bool empty() const { return maps_.empty(); }

    // What the tables say of a message from `sender`: the group's name
    // (the key that answered) and its limit; nothing when no table has a
    // limit for it.
    struct Found {
        std::string name;
        core::SenderLimit limit;
    };
    std::optional<Found> find(std::string_view sender) const;

    // The group of a message from `sender` for the scheduler (0: none):
    // a group seen first gets the next number, and its limit is given to
    // `sched` then.  Numbers are kept for the daemon's life; past the last
    // one, new groups are none (warned about once).
    core::SenderGroup group(std::string_view sender, core::Scheduler& sched);
    // The number of the group named `name` (a reply rule's sender scope
    // kept across a restart), numbered now as group() would number it
    // when the tables still make it a group; 0 when they do not.
    core::SenderGroup number(const std::string& name, core::Scheduler& sched);
    // How many groups have a number.
    size_t groups() const { return numbers_.size(); }
    // The name of group `g` (the key that answered: a sender address or
    // domain), "" for none or a number not given: the reply rules' sender
    // scopes (ReplyActions::Scopes::sender_group).
    const std::string& name_of(core::SenderGroup g) const {
        static const std::string none;
        return g == 0 || g > names_.size() ? none : names_[g - 1];
    }

  private:
    using Table = AnyTable;
    // The limit the first table that answers `key` gives, if any (a bad
    // answer is warned about and the next table asked).
    std::optional<core::SenderLimit> lookup(std::string_view key, MatchBudget& budget) const;
    // The number of group `found`, given it and its limit to `sched` when
    // it is new.
    core::SenderGroup numbered(const Found& found, core::Scheduler& sched);

    std::vector<Table> maps_;
    Warn warn_;
    std::unordered_map<std::string, core::SenderGroup> numbers_;
    std::vector<std::string> names_; // by number - 1
    bool full_warned_ = false;
};

} // namespace cqmgr::qmgr
