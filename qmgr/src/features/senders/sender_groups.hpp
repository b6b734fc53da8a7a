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
// pattern, has its own allowance.  The null sender has no address or
// domain to look up.
//
// When neither answers, and cqmgr_sender_class_header_maps is set, the
// message's header class is the third key: those tables are matched, as
// cqmgr_priority_header_maps is (table_list.hpp), against each line of the
// message's primary header block, and the first answer that is a class
// name (one word of printable characters, at most max_class bytes; lower
// case) is looked up in cqmgr_sender_limits.  If that answers with a
// limit, the group is "class NAME", apart from every address or domain
// group: the mail of many senders that carries one List-Id shares one
// allowance.  The header block is read only then, never for a message
// whose sender or domain answered.
#pragma once

#include "cqmgr/core/scheduler.hpp"
#include "table_list.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class SenderGroups {
  public:
    using Warn = std::function<void(const std::string&)>;

    SenderGroups() = default;
    // Opens the tables of cqmgr_sender_limits (`maps`) and of
    // cqmgr_sender_class_header_maps (`class_header_maps`), read now: call
    // before the jail.  Throws conf::ConfigError naming a table that
    // cannot be read or whose type is not supported.
    static SenderGroups open(const std::vector<std::string>& maps, Warn warn,
                             const std::vector<std::string>& class_header_maps = {});

    // True when cqmgr_sender_limits names no table: no message has a group.
    bool empty() const { return maps_.empty(); }

    // The message's primary header lines (queuefile::read_header_lines),
    // asked for only when the header class is needed.
    using HeaderLines = std::function<const std::vector<std::string>&()>;

    // What the tables say of a message from `sender`: the group's name
    // (the key that answered, or "class NAME") and its limit; nothing when
    // no table has a limit for it.  `headers` (may be empty: no header
    // class) is called only when the sender and its domain got no answer
    // and a header class table is set.
    struct Found {
        std::string name;
        core::SenderLimit limit;
        bool header_class = false; // the group is a header class's
    };
    std::optional<Found> find(std::string_view sender, const HeaderLines& headers = {}) const;

    // The group of a message from `sender` for the scheduler (0: none):
    // a group seen first gets the next number, and its limit is given to
    // `sched` then.  Numbers are kept for the daemon's life; past the last
    // one, new groups are none (warned about once).
    core::SenderGroup group(std::string_view sender, core::Scheduler& sched,
                            const HeaderLines& headers = {});
    // The number of the group named `name` (a reply rule's sender scope
    // kept across a restart), numbered now as group() would number it
    // when the tables still make it a group; 0 when they do not.
    core::SenderGroup number(const std::string& name, core::Scheduler& sched);
    // How many groups have a number.
    size_t groups() const { return names_.size(); }
    // The name of group `g` (the key that answered: a sender address or
    // domain, or "class NAME"), "" for none or a number not given: explain's
    // sender-group lines and the reply rules' sender scopes
    // (ReplyActions::Scopes::sender_group).
    const std::string& name_of(core::SenderGroup g) const {
        static const std::string none;
        return g == 0 || g > names_.size() ? none : names_[g - 1];
    }

    // The longest class name a header class table may give.
    static constexpr size_t max_class = 64;
    // The class name `answer` gives (surrounding blanks ignored, lower
    // case): one word of printable ASCII of at most max_class bytes; `why`
    // says what is wrong with another.
    static std::optional<std::string> class_name(const std::string& answer, std::string& why);

  private:
    // The limit the first table that answers `key` gives, if any (a bad
    // answer is warned about and the next table asked).
    std::optional<core::SenderLimit> lookup(std::string_view key, MatchBudget& budget) const;
    // The number of group `found`, given it and its limit to `sched` when
    // it is new.
    core::SenderGroup numbered(const Found& found, core::Scheduler& sched);

    TableList maps_;
    TableList class_maps_;
    Warn warn_;
    // The numbers of the address and domain groups ([0]) and of the header
    // classes' ([1]), apart so that no sender can share a class's group.
    std::unordered_map<std::string, core::SenderGroup> numbers_[2];
    std::vector<std::string> names_; // by number - 1
    bool full_warned_ = false;
};

} // namespace cqmgr::qmgr
