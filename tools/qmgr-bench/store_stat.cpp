#include "store_stat.hpp"

#include "clock.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <lmdb.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {
namespace {

// Sums the entries of every named database (the main database lists
// them); -1 on any LMDB error. Runs in the child.
long long count_records(const std::string& path) {
    MDB_env* env = nullptr;
    if (mdb_env_create(&env) != 0) return -1;
    mdb_env_set_maxdbs(env, 16);
    long long total = -1;
    MDB_txn* txn = nullptr;
    MDB_dbi main_db = 0;
    MDB_cursor* cur = nullptr;
    if (mdb_env_open(env, path.c_str(), MDB_RDONLY | MDB_NOSUBDIR | MDB_NOTLS, 0600) == 0 &&
        mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0 &&
        mdb_dbi_open(txn, nullptr, 0, &main_db) == 0 && mdb_cursor_open(txn, main_db, &cur) == 0) {
        total = 0;
        MDB_val k, v;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
        for (; rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            std::string name(static_cast<const char*>(k.mv_data), k.mv_size);
            MDB_dbi dbi = 0;
            MDB_stat st{};
            if (mdb_dbi_open(txn, name.c_str(), 0, &dbi) != 0 || mdb_stat(txn, dbi, &st) != 0) {
                total = -1;
                break;
            }
            total += static_cast<long long>(st.ms_entries);
        }
        mdb_cursor_close(cur);
    }
    if (txn) mdb_txn_abort(txn);
    mdb_env_close(env);
    return total;
}

} // namespace

// The child writes the count as text to a pipe; 5 s at most.
StoreStat read_store_stat(const std::string& path) {
    StoreStat s;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return s;
    s.present = true;
    s.bytes = static_cast<std::uint64_t>(st.st_size);
    if (::access((path + "-lock").c_str(), F_OK) != 0) {
        s.error = "no lock file";
        return s;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        s.error = std::string("pipe: ") + std::strerror(errno);
        return s;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        s.error = std::string("fork: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        return s;
    }
    if (pid == 0) {
        ::close(fds[0]);
        std::string out = std::to_string(count_records(path));
        (void)!::write(fds[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string text;
    double deadline = boot_seconds() + 5;
    for (;;) {
        pollfd p{fds[0], POLLIN, 0};
        int left = static_cast<int>((deadline - boot_seconds()) * 1000);
        if (left <= 0 || ::poll(&p, 1, left) <= 0) break;
        char buf[64];
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n <= 0) break;
        text.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    // The pipe's end means the child is exiting, unless the time ran out.
    if (boot_seconds() >= deadline) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!text.empty() && text != "-1")
        s.records = std::stoll(text);
    else
        s.error = WIFSIGNALED(status)
                      ? "reader killed by signal " + std::to_string(WTERMSIG(status))
                      : "unreadable";
    return s;
}

} // namespace bench
