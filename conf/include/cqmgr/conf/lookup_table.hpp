// Lookup tables named in a parameter as Postfix names them ("type:name"),
// for cqmgr's own tables (cqmgr_rate_limits,
// cqmgr_cluster_concurrency_limits).  The types read here are those that
// need no database library:
//   texthash:/path   a file of "key value" lines, as postmap(1) reads its
//                    source: '#' comments, blank lines, and lines that
//                    start with white space continue the previous one
//   inline:{ k=v, { k = v with blanks } }
//   static:value     every key has this value
// Keys are matched without regard to case, as Postfix's indexed tables
// fold them.  Tables are read once, at start-up (before the chroot); a
// change takes effect with "postfix reload".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::conf {

class LookupTables {
  public:
    // Opens every table of `specs` (a parameter's list, in order).  Throws
    // ConfigError naming the table when one cannot be read or its type is
    // not supported.
    static LookupTables open(const std::vector<std::string>& specs);

    // The value of `key` in the first table that has it.
    std::optional<std::string> find(std::string_view key) const;
    bool empty() const { return tables_.empty(); }

  private:
    struct Table {
        std::map<std::string, std::string, std::less<>> entries;
        std::optional<std::string> any; // static:
    };
    std::vector<Table> tables_;
};

} // namespace cqmgr::conf
