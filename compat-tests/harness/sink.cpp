#include "sink.hpp"

#include "error.hpp"
#include "net.hpp"
#include "signals.hpp"

#include <thread>

namespace compat {
namespace {

const char* const kSmtpSink = "/usr/sbin/smtp-sink";

// Last `max_bytes` of a log file, for error messages.
std::string log_tail(const std::string& path, size_t max_bytes = 2000) {
    std::string text;
    try {
        if (!read_file_if_exists(path, text)) return "(no output)";
    } catch (const Error& e) {
        return e.what();
    }
    if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
    return text.empty() ? "(no output)" : text;
}

} // namespace

// Records the sink's settings; start() runs it.
Sink::Sink(SinkSpec spec, std::uint16_t port, std::string log_path, std::string dump_dir,
           UserIds user)
    : spec_(std::move(spec)), port_(port), log_path_(std::move(log_path)),
      dump_dir_(std::move(dump_dir)), user_(user) {
    if (spec_.count_sessions) {
        backend_port_ = allocate_ports(1)[0];
        std::string dir = log_path_.substr(0, log_path_.rfind('/') + 1);
        counter_ = std::make_unique<SessionCounter>(port_, backend_port_,
                                                    dir + "sessions-" + spec_.name + ".log");
    }
}

// Stops the sink if the owner did not.
Sink::~Sink() {
    stop();
}

// Runs smtp-sink as the postfix user (dropping privileges ourselves instead of
// using -u, so that PR_SET_PDEATHSIG survives and a killed harness leaves no
// sink behind) and waits until its port is in LISTEN state.
void Sink::configure(const std::vector<std::string>& expanded_args) {
    if (!configured_) make_dir(dump_dir_, 0755, user_.uid, user_.gid);
    configured_ = true;
    args_ = expanded_args;
    if (spec_.dump) {
        // One file per transaction; smtp-sink appends a random hex suffix.
        args_.push_back("-d");
        args_.push_back(dump_dir_ + "/tx.");
    }
}

// Starts (or restarts) the process; the port stays the same.
void Sink::start() {
    if (!configured_) configure({});
    if (proc_.running())
        throw Error("sink '" + spec_.name +
                    "': expected it to be down before start, found it "
                    "running");
    SpawnOptions o;
    o.argv.push_back(kSmtpSink);
    for (const auto& a : args_)
        o.argv.push_back(a);
    // Behind the session counter, smtp-sink listens on a port of its own.
    const std::uint16_t listen = counter_ ? backend_port_ : port_;
    o.argv.push_back(spec_.host + ":" + std::to_string(listen));
    o.argv.push_back(std::to_string(spec_.backlog));
    o.output_path = log_path_;
    o.uid = user_.uid;
    o.gid = user_.gid;
    proc_ = Process::spawn(o);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!is_listening(listen)) {
        if (!proc_.running())
            throw Error("sink '" + spec_.name + "': expected `" + join_command(o.argv) +
                        "` to keep running, found " + describe_wait_status(proc_.status()) +
                        "; its output: " + log_tail(log_path_));
        if (std::chrono::steady_clock::now() >= deadline)
            throw Error("sink '" + spec_.name + "': expected port " + std::to_string(listen) +
                        " to be listening within 10 s, found no listener");
        check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (counter_) counter_->start();
}

// SIGTERM, then SIGKILL after a short grace period.
void Sink::stop() noexcept {
    if (counter_) counter_->stop();
    proc_.terminate(std::chrono::seconds(3));
}

} // namespace compat
