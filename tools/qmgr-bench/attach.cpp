#include "attach.hpp"

#include "clock.hpp"
#include "error.hpp"

#include <csignal>
#include <sstream>
#include <unistd.h>

namespace bench {
namespace {

// Replaces every occurrence of `key` in `s`.
std::string replace_all(std::string s, const std::string& key, const std::string& value) {
    for (size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + value.size()))
        s.replace(p, key.size(), value);
    return s;
}

// Resolves argv[0] like a shell would, in the usual directories.
std::string find_tool(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    for (const char* d : {"/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"}) {
        std::string p = std::string(d) + "/" + name;
        if (access(p.c_str(), X_OK) == 0) return p;
    }
    throw compat::Error("--attach: expected a program named '" + name +
                        "' in /usr/bin, /usr/sbin, /bin, /sbin or /usr/local/bin, found none");
}

} // namespace

// Freeze, start the tool, give it `settle_seconds`, thaw.
AttachedTool::AttachedTool(const std::string& command, pid_t qmgr, const std::string& out,
                           double settle_seconds) {
    compat::SpawnOptions o;
    std::istringstream in(command);
    std::string w;
    while (in >> w)
        o.argv.push_back(replace_all(replace_all(w, "{pid}", std::to_string(qmgr)), "{out}", out));
    if (o.argv.empty()) throw compat::Error("--attach: expected a command, found an empty one");
    o.argv[0] = find_tool(o.argv[0]);
    o.output_path = out + ".log";
    if (kill(qmgr, SIGSTOP) != 0) throw compat::sys_error("SIGSTOP queue manager");
    try {
        proc_ = compat::Process::spawn(o);
        pause(settle_seconds);
    } catch (...) {
        kill(qmgr, SIGCONT);
        throw;
    }
    if (kill(qmgr, SIGCONT) != 0) throw compat::sys_error("SIGCONT queue manager");
    if (!proc_.running())
        throw compat::Error(
            "--attach: expected `" + compat::join_command(o.argv) + "` to keep running, found " +
            compat::describe_wait_status(proc_.status()) + " (output in " + o.output_path + ")");
}

AttachedTool::~AttachedTool() {
    stop();
}

// perf and strace finish their reports on SIGINT; SIGKILL after 60 s.
void AttachedTool::stop() noexcept {
    if (!proc_.running()) return;
    kill(proc_.pid(), SIGINT);
    try {
        if (proc_.wait_for(std::chrono::seconds(60))) return;
    } catch (...) {
    }
    proc_.terminate(std::chrono::seconds(1));
}

} // namespace bench
