// Restart on table change.  Stock qmgr opens the lookup tables named in
// fast_flush_domains (its only tables) before it drops privileges, and
// before it takes each trigger it checks whether one of their files changed;
// if so it logs "table NAME has changed -- restarting" and exits, and master
// starts a fresh queue manager that sees the new contents.  cqmgr leaves the
// lookups to flush(8), but keeps the same files open and restarts the same
// way, so an administrator sees the same thing.
//
// Only tables kept in one file are watched, as in Postfix: hash and btree
// (NAME.db), cdb (NAME.cdb), lmdb (NAME.lmdb; only its removal counts, as
// it has many writers), dbm and sdbm (NAME.pag).  A file that cannot be
// opened is not watched (stock then uses a stand-in table without a file).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::qmgr {

class TableWatch {
  public:
    TableWatch() = default;
    // Opens the files of `tables` ("type:name" as written in the list).
    explicit TableWatch(const std::vector<std::string>& tables);
    ~TableWatch();
    TableWatch(const TableWatch&) = delete;
    TableWatch& operator=(const TableWatch&) = delete;
    // Takes `other`'s files (the start-up hands them on from before the jail).
    TableWatch(TableWatch&& other) noexcept : files_(std::exchange(other.files_, {})) {}

    // The name of a table whose file was modified or removed since it was
    // opened, as stock names it in its log line, or nullopt.
    std::optional<std::string> changed() const;

  private:
    struct File {
        std::string name; // "type:name(0,lock|utf8_request)"
        int fd = -1;
        time_t mtime = 0;
        bool multi_writer = false;
    };
    std::vector<File> files_;
};

} // namespace cqmgr::qmgr
