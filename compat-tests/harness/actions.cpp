#include "actions.hpp"

#include "error.hpp"
#include "fsutil.hpp"
#include "maillog.hpp"
#include "net.hpp"
#include "process.hpp"
#include "signals.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <regex>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace compat {

// Resolves a bare program name in the usual system directories.
std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    for (const char* d : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
        std::string p = std::string(d) + "/" + name;
        if (access(p.c_str(), X_OK) == 0) return p;
    }
    throw Error("expected a program named '" + name +
                "' in /usr/sbin, /usr/bin, /sbin or /bin, found none");
}

namespace {

using Clock = std::chrono::steady_clock;

// The earlier of the scenario deadline and now + `seconds` (if given).
Clock::time_point step_deadline(const ActionContext& ctx, std::optional<double> seconds) {
    if (!seconds) return ctx.deadline;
    auto d = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*seconds));
    return std::min(d, ctx.deadline);
}

// Children of master whose program name is one of `names`.
std::vector<ProcInfo> master_children_named(const Instance& inst,
                                            const std::vector<std::string>& names) {
    std::vector<ProcInfo> out;
    for (auto& p : children_of(inst.master_pid()))
        if (std::find(names.begin(), names.end(), program_name(p)) != names.end())
            out.push_back(std::move(p));
    return out;
}

// Waits (bounded) until master has at least one child with one of `names`.
std::vector<ProcInfo> await_children(const ActionContext& ctx,
                                     const std::vector<std::string>& names,
                                     std::chrono::seconds limit, const std::string& what) {
    auto until = std::min(ctx.deadline, Clock::now() + limit);
    for (;;) {
        auto procs = master_children_named(ctx.inst, names);
        if (!procs.empty()) return procs;
        if (!ctx.inst.master_alive())
            throw Error("expected master to keep running while looking for " + what +
                        ", found it gone");
        if (Clock::now() >= until)
            throw Error("expected a running " + what + " (a child of master pid " +
                        std::to_string(ctx.inst.master_pid()) + "), found none");
        check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// Waits (bounded) until every process in `procs` waits for events, i.e. has
// finished starting up. A queue manager killed before it took master's first
// wakeup makes master log "bad command startup" and stop the service for
// 60 s; a slow start (a sanitizer build, a loaded machine) must not race
// with the kill. After `limit` the caller goes ahead anyway.
void await_started(const std::vector<ProcInfo>& procs, std::chrono::milliseconds limit) {
    auto until = Clock::now() + limit;
    for (;;) {
        bool starting = false;
        for (const auto& p : procs)
            if (process_alive(p.pid) && !waits_for_events(p.pid)) starting = true;
        if (!starting || Clock::now() >= until) return;
        check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// Sends `sig` to every process in `procs` and records them as killed on purpose.
void signal_all(const std::vector<ProcInfo>& procs, int sig, ActionContext& ctx,
                const std::string& what) {
    for (const auto& p : procs) {
        ctx.killed.pids.insert(p.pid);
        ctx.killed.programs.insert(program_name(p));
        if (kill(p.pid, sig) != 0 && errno != ESRCH)
            throw sys_error("kill " + what + " pid " + std::to_string(p.pid));
        if (ctx.verbose)
            std::cout << "  sent signal " << sig << " to " << what << " pid " << p.pid << " ("
                      << join_command(p.argv) << ")\n"
                      << std::flush;
    }
}

// Waits until none of the processes is alive (master reaps them).
void await_gone(const std::vector<ProcInfo>& procs, std::chrono::milliseconds limit) {
    auto until = Clock::now() + limit;
    for (;;) {
        bool any = false;
        for (const auto& p : procs)
            if (process_alive(p.pid)) any = true;
        if (!any || Clock::now() >= until) return;
        check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// A master.cf service entry (only what stop/start_service need).
struct ServiceEntry {
    std::string socket;  // relative to the queue directory: private/NAME or public/NAME
    std::string command; // argv[0] of its processes
};

// Finds `name` among the unix services in master.cf.
ServiceEntry find_service(const Instance& inst, const std::string& name) {
    std::string text = read_file(inst.conf_dir() + "/master.cf");
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || std::isspace(static_cast<unsigned char>(line[0])))
            continue;
        std::istringstream f(line);
        std::vector<std::string> fields;
        std::string w;
        while (f >> w)
            fields.push_back(w);
        if (fields.size() < 8 || fields[0] != name) continue;
        if (fields[1] != "unix")
            throw Error("service '" + name +
                        "': expected a unix service in master.cf, found type " + fields[1]);
        ServiceEntry e;
        e.socket = (fields[2] == "n" ? "public/" : "private/") + name;
        e.command = fields[7];
        return e;
    }
    throw Error("expected a service named '" + name + "' in " + inst.conf_dir() +
                "/master.cf, found none");
}

// True if a master child belongs to the service (argv[0] = command, and
// "-n name" given or the command is the service name).
bool serves(const ProcInfo& p, const std::string& service, const std::string& command) {
    if (program_name(p) != command) return false;
    for (size_t i = 0; i + 1 < p.argv.size(); ++i)
        if (p.argv[i] == "-n") return p.argv[i + 1] == service;
    return command == service;
}

// Parses a record length (7-bit groups, least significant first).
bool read_length(const std::string& d, size_t& pos, size_t& len) {
    len = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (pos >= d.size()) return false;
        unsigned char c = static_cast<unsigned char>(d[pos++]);
        len |= static_cast<size_t>(c & 0x7f) << shift;
        if ((c & 0x80) == 0) return true;
    }
    return false;
}

// Lists the regular files directly in a queue directory, sorted.
std::vector<std::string> queue_files(const std::string& dir) {
    std::vector<std::string> out;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) throw sys_error("opendir " + dir);
    while (struct dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        struct stat st {};
        if (lstat((dir + "/" + n).c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(n);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

// A fifo service (master.cf type fifo) gets the bytes written into the
// named pipe; an error if nobody reads it (no queue manager listening).
void send_fifo_trigger(const std::string& path, const std::string& bytes) {
    int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw sys_error("trigger: open fifo " + path);
    bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    int saved = errno;
    close(fd);
    if (!ok) {
        errno = saved;
        throw sys_error("trigger: write fifo " + path);
    }
}

// Writes trigger bytes plus the NUL that unix_trigger clients send, then
// waits (up to 10 s) for the server to close, like mail_trigger() does; a
// fifo (master.cf type fifo) is written as fifo_trigger() does.
void send_trigger(const std::string& path, const std::string& bytes) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
        send_fifo_trigger(path, bytes);
        return;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw sys_error("socket");
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path) {
        close(fd);
        throw Error("trigger: socket path too long: " + path);
    }
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        Error e = sys_error("trigger: connect " + path);
        close(fd);
        throw e;
    }
    std::string data = bytes + std::string(1, '\0');
    bool ok = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
    int saved = errno;
    if (ok) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 10000) > 0) {
            char c;
            (void)!read(fd, &c, 1);
        }
    }
    close(fd);
    if (!ok) {
        errno = saved;
        throw sys_error("trigger: write " + path);
    }
}

namespace {

// How a scenario's command (of an action or a report) is started: ${...}
// expanded, a bare name looked up, MAIL_CONFIG set, output to `output`.
SpawnOptions scenario_command(const std::vector<std::string>& command, const std::string& where,
                              const std::string& output, const ActionContext& ctx) {
    SpawnOptions o;
    for (const auto& arg : command)
        o.argv.push_back(ctx.vars.expand(arg, where + ".command"));
    o.argv[0] = find_program(o.argv[0]);
    o.env.push_back("MAIL_CONFIG=" + ctx.inst.conf_dir());
    o.output_path = output;
    return o;
}

// Runs a command action.
void run_command_action(const ActionSpec& a, std::size_t index, ActionContext& ctx) {
    SpawnOptions o = scenario_command(
        a.command, a.where, ctx.inst.dir() + "/action-" + std::to_string(index) + ".log", ctx);
    if (ctx.verbose)
        std::cout << "  " << a.where << ": " << join_command(o.argv) << "\n" << std::flush;
    if (!a.allow_failure) {
        run_command(o, time_left(ctx.deadline));
        return;
    }
    Process p = Process::spawn(o);
    if (!p.wait_for(time_left(ctx.deadline))) {
        p.terminate();
        throw Error("expected `" + p.command() +
                    "` to finish before the scenario timeout, it "
                    "was still running (output in " +
                    o.output_path + ")");
    }
}

// Waits for a wait_for condition, bounded by its timeout and the scenario
// deadline; a service that master throttles after a failed start ends the
// wait at once.
void run_wait(const WaitSpec& w, const std::string& where, ActionContext& ctx) {
    auto until = step_deadline(ctx, w.timeout);
    std::string state;
    MaillogTail tail(ctx.inst.maillog_path());
    for (;;) {
        if (wait_condition_met(w, ctx, state)) return;
        if (!ctx.inst.master_alive())
            throw Error(where + ": expected master to keep running while waiting, found it gone");
        for (const auto& line : tail.read_new_lines())
            if (is_startup_failure(line, ctx.killed))
                throw Error(where +
                            ": a Postfix service failed at startup (master throttles it), "
                            "so the wait cannot end: " +
                            line);
        if (Clock::now() >= until) {
            std::string want;
            switch (w.kind) {
            case WaitSpec::Kind::Log:
                want = std::to_string(w.count) + " maillog lines matching /" +
                       ctx.vars.expand(w.log, where) + "/";
                break;
            case WaitSpec::Kind::Queue:
                want = std::to_string(w.files) + " files in " + w.queue + "/";
                break;
            case WaitSpec::Kind::Connections:
                want = std::to_string(w.connections) + " connections to sink '" + w.sink + "'";
                break;
            case WaitSpec::Kind::Unlocked:
                want = "no locked file in " + w.queue + "/";
                break;
            }
            throw Error(where + ": timed out waiting for " + want + ", found " + state);
        }
        check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

} // namespace

// Evaluates a wait condition once.
bool wait_condition_met(const WaitSpec& w, ActionContext& ctx, std::string& state) {
    switch (w.kind) {
    case WaitSpec::Kind::Log: {
        std::regex re(ctx.vars.expand(w.log, "wait_for.log"));
        std::string log;
        read_file_if_exists(ctx.inst.maillog_path(), log);
        int n = 0;
        for (const auto& line : split_lines(log))
            if (std::regex_search(line, re)) ++n;
        state = std::to_string(n) + " matching lines";
        return n >= w.count;
    }
    case WaitSpec::Kind::Queue: {
        auto n = count_files(ctx.inst.queue_dir() + "/" + w.queue);
        state = std::to_string(n) + " files";
        return n == static_cast<std::uint64_t>(w.files);
    }
    case WaitSpec::Kind::Unlocked: {
        auto n = count_locked_files(ctx.inst.queue_dir() + "/" + w.queue);
        state = std::to_string(n) + " locked files";
        return n == 0;
    }
    case WaitSpec::Kind::Connections: {
        Sink* s = ctx.sinks.at(w.sink);
        int n = established_connections(s->port());
        state = std::to_string(n) + " connections";
        return n >= w.connections;
    }
    }
    return false;
}

// Finds the first R/S records and the SIZE fields, then damages the bytes.
std::string corrupt_queue_bytes(const std::string& data, const std::string& how) {
    if (data.empty() || data[0] != 'C')
        throw Error("expected a queue file starting with a SIZE (C) record, found " +
                    std::string(data.empty() ? "an empty file" : "another record type"));
    size_t pos = 0;
    long data_size = -1, data_offset = -1;
    size_t first_rcpt = std::string::npos, first_sender = std::string::npos;
    while (pos < data.size()) {
        size_t type_at = pos;
        char type = data[pos++];
        size_t len = 0;
        if (!read_length(data, pos, len) || pos + len > data.size())
            throw Error("expected well-formed records, found a bad length at offset " +
                        std::to_string(type_at));
        std::string payload = data.substr(pos, len);
        pos += len;
        if (type == 'C' && type_at == 0)
            std::sscanf(payload.c_str(), "%ld %ld", &data_size, &data_offset);
        if (type == 'R' && first_rcpt == std::string::npos) first_rcpt = type_at;
        if (type == 'S' && first_sender == std::string::npos) first_sender = type_at;
        if (type == 'M') break; // start of content: the envelope is done
    }
    if (data_size <= 0 || data_offset <= 0 ||
        static_cast<size_t>(data_offset + data_size) > data.size())
        throw Error("expected a SIZE record with a plausible data offset and size, found " +
                    std::to_string(data_size) + " " + std::to_string(data_offset));
    std::string out = data;
    if (how == "truncate") {
        // Cut in the middle of the content: the reader hits EOF before the end record.
        out.resize(static_cast<size_t>(data_offset + data_size / 2));
    } else if (how == "bad_record") {
        if (first_rcpt == std::string::npos)
            throw Error("expected an R (recipient) record in the envelope, found none");
        out[first_rcpt] = 'Q'; // no such record type
    } else if (how == "no_sender") {
        if (first_sender == std::string::npos)
            throw Error("expected an S (sender) record in the envelope, found none");
        out[first_sender] = 'K'; // a killed record: the file has no sender any more
    } else {
        throw Error("unknown corruption '" + how + "'");
    }
    return out;
}

// Rewrites the file in place (same inode, so the queue ID stays valid) and moves it.
std::string corrupt_queue_file(const std::string& queue_dir, const std::string& from_queue,
                               const std::string& to_queue, const std::string& how, uid_t owner,
                               gid_t group) {
    std::string from_dir = queue_dir + "/" + from_queue;
    auto files = queue_files(from_dir);
    if (files.empty())
        throw Error("corrupt_file: expected a queue file in " + from_dir + ", found none");
    std::string id = files.front();
    std::string path = from_dir + "/" + id;
    std::string data = read_file(path);
    std::string out;
    try {
        out = corrupt_queue_bytes(data, how);
    } catch (const Error& e) {
        throw Error("corrupt_file " + path + ": " + e.what());
    }
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw sys_error("open " + path);
    bool ok = pwrite(fd, out.data(), out.size(), 0) == static_cast<ssize_t>(out.size()) &&
              ftruncate(fd, static_cast<off_t>(out.size())) == 0 && fchown(fd, owner, group) == 0 &&
              fchmod(fd, 0700) == 0;
    int saved = errno;
    close(fd);
    if (!ok) {
        errno = saved;
        throw sys_error("rewrite " + path);
    }
    std::string target = queue_dir + "/" + to_queue + "/" + id;
    if (rename(path.c_str(), target.c_str()) != 0) throw sys_error("rename " + path + " " + target);
    return id;
}

// Dispatches on the action kind after the optional delay and wait.
void run_action(const ActionSpec& a, std::size_t index, ActionContext& ctx) {
    check_interrupted();
    if (a.delay_before > 0) interruptible_sleep(a.delay_before);
    if (a.wait_for) run_wait(*a.wait_for, a.where + ".wait_for", ctx);
    if (ctx.verbose && a.kind != "command" && !a.kind.empty())
        std::cout << "  " << a.where << ": " << a.kind << "\n" << std::flush;
    if (a.kind.empty()) return;
    if (a.kind == "command") {
        run_command_action(a, index, ctx);
    } else if (a.kind == "sleep") {
        interruptible_sleep(a.sleep);
    } else if (a.kind == "trigger") {
        send_trigger(ctx.inst.queue_dir() + "/public/qmgr", a.trigger);
    } else if (a.kind == "kill_qmgr") {
        int sig = signal_number(a.signal, a.where);
        auto procs =
            await_children(ctx, {"qmgr", "cqmgr"}, std::chrono::seconds(10), "queue manager");
        await_started(procs, std::chrono::seconds(10));
        signal_all(procs, sig, ctx, "queue manager");
        if (sig == SIGKILL || sig == SIGTERM) await_gone(procs, std::chrono::seconds(5));
    } else if (a.kind == "kill_process") {
        int sig = signal_number(a.signal, a.where);
        std::vector<ProcInfo> procs;
        if (a.connected_to.empty()) {
            procs = await_children(ctx, {a.process}, std::chrono::seconds(30),
                                   "'" + a.process + "' process");
        } else {
            // Only the agents with a connection to that sink (bounded wait).
            std::uint16_t port = ctx.sinks.at(a.connected_to)->port();
            auto until = std::min(ctx.deadline, Clock::now() + std::chrono::seconds(30));
            for (;;) {
                auto inodes = client_socket_inodes(port);
                for (auto& p : master_children_named(ctx.inst, {a.process}))
                    if (process_has_socket(p.pid, inodes)) procs.push_back(std::move(p));
                if (!procs.empty()) break;
                if (Clock::now() >= until)
                    throw Error("expected a '" + a.process + "' process connected to sink '" +
                                a.connected_to + "', found none");
                check_interrupted();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
        signal_all(procs, sig, ctx, a.process);
        if (sig == SIGKILL || sig == SIGTERM) await_gone(procs, std::chrono::seconds(5));
    } else if (a.kind == "corrupt_file") {
        UserIds postfix = lookup_user("postfix");
        std::string id = corrupt_queue_file(ctx.inst.queue_dir(), a.from_queue, a.to_queue, a.how,
                                            postfix.uid, postfix.gid);
        if (ctx.verbose)
            std::cout << "  " << a.where << ": " << a.how << " " << id << ", moved " << a.from_queue
                      << " -> " << a.to_queue << "\n"
                      << std::flush;
    } else if (a.kind == "stop_service") {
        ServiceEntry e = find_service(ctx.inst, a.service);
        std::string sock = ctx.inst.queue_dir() + "/" + e.socket;
        std::string parked = sock + ".compat-stopped";
        // Nobody can connect any more; master keeps its listener and spawns nothing.
        if (rename(sock.c_str(), parked.c_str()) != 0)
            throw sys_error("stop_service " + a.service + ": rename " + sock);
        std::vector<ProcInfo> procs;
        for (auto& p : children_of(ctx.inst.master_pid()))
            if (serves(p, a.service, e.command)) procs.push_back(std::move(p));
        // Existing connections die with the processes.
        signal_all(procs, SIGTERM, ctx, a.service);
        await_gone(procs, std::chrono::seconds(5));
        for (const auto& p : procs)
            if (process_alive(p.pid)) kill(p.pid, SIGKILL);
        await_gone(procs, std::chrono::seconds(2));
    } else if (a.kind == "start_service") {
        ServiceEntry e = find_service(ctx.inst, a.service);
        std::string sock = ctx.inst.queue_dir() + "/" + e.socket;
        std::string parked = sock + ".compat-stopped";
        if (rename(parked.c_str(), sock.c_str()) != 0)
            throw sys_error("start_service " + a.service + ": rename " + parked +
                            " (was it stopped?)");
    } else if (a.kind == "fill_fs") {
        long long n = ctx.inst.queue_fs().fill();
        if (ctx.verbose)
            std::cout << "  " << a.where << ": wrote " << n << " bytes into "
                      << ctx.inst.queue_fs().filler_path() << "\n"
                      << std::flush;
    } else if (a.kind == "free_fs") {
        ctx.inst.queue_fs().free_space();
    } else if (a.kind == "start_sink") {
        ctx.sinks.at(a.sink)->start();
    } else if (a.kind == "stop_sink") {
        ctx.sinks.at(a.sink)->stop();
    } else {
        throw Error(a.where + ": unknown action kind '" + a.kind + "'");
    }
}

std::string run_report(const ReportSpec& report, const ActionContext& ctx) {
    SpawnOptions o = scenario_command(report.command, report.where,
                                      ctx.inst.dir() + "/report-" + report.name + ".txt", ctx);
    if (ctx.verbose)
        std::cout << "  " << report.where << ": " << join_command(o.argv) << "\n" << std::flush;
    // Its own bound: the report runs after the outcome, when the scenario's
    // deadline may be all but spent.
    run_command(o, std::chrono::seconds(kReportSeconds));
    std::string text;
    read_file_if_exists(o.output_path, text);
    return text;
}

} // namespace compat
