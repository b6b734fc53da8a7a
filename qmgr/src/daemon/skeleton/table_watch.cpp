#include "table_watch.hpp"

#include "log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {
// The file a table of this type keeps its data in (appended to the name),
// or nullptr for tables without one.
const char* file_suffix(const std::string& type) {
    if (type == "hash" || type == "btree") return ".db";
    if (type == "cdb") return ".cdb";
    if (type == "lmdb") return ".lmdb";
    if (type == "dbm" || type == "sdbm") return ".pag";
    return nullptr;
}
} // namespace

TableWatch::TableWatch(const std::vector<std::string>& tables) {
    for (const auto& table : tables) {
        auto colon = table.find(':');
        std::string type = table.substr(0, colon);
        const char* suffix = file_suffix(type);
        if (!suffix) continue;
        // Match lists open their tables read-only with locking and UTF-8
        // checks, and register them under a name that says so.
        std::string name = table + "(0,lock|utf8_request)";
        bool seen = false;
        for (const auto& f : files_)
            seen = seen || f.name == name;
        if (seen) continue;
        std::string path = table.substr(colon + 1) + suffix;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || ::fstat(fd, &st) < 0) {
            if (fd >= 0) ::close(fd);
            log::debug("table " + table + ": not watched: " + std::strerror(errno));
            continue;
        }
        files_.push_back({name, fd, st.st_mtime, type == "lmdb"});
    }
}

TableWatch::~TableWatch() {
    for (const auto& f : files_)
        ::close(f.fd);
}

std::optional<std::string> TableWatch::changed() const {
    for (const auto& f : files_) {
        struct stat st;
        if (::fstat(f.fd, &st) < 0) log::fatal(std::string("fstat: ") + std::strerror(errno));
        if ((!f.multi_writer && st.st_mtime != f.mtime) || st.st_nlink == 0) return f.name;
    }
    return std::nullopt;
}

} // namespace cqmgr::qmgr
