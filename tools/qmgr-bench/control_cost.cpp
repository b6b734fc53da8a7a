#include "control_cost.hpp"

#include "clock.hpp"
#include "control_link.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "metrics.hpp"
#include "net.hpp"
#include "qmgr_probe.hpp"
#include "queue_template.hpp"
#include "signals.hpp"
#include "smtp_client.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace bench {
namespace {

constexpr int injecting_sessions = 4;

// One request kind and how often it is repeated.
struct Probe {
    std::string name; // as printed
    std::string line; // the control request, or "" for a metrics scrape
    int repetitions;
};

// The messages of the template: message i goes to uI@d(I mod destinations).example.
std::function<void(const compat::Instance&, std::uint16_t)> injector(std::uint64_t messages,
                                                                     std::uint64_t destinations) {
    return [=](const compat::Instance&, std::uint16_t port) {
        std::vector<std::thread> threads;
        std::vector<std::string> errors(injecting_sessions);
        for (int t = 0; t < injecting_sessions; ++t)
            threads.emplace_back([&, t] {
                try {
                    compat::SmtpClient c(port, std::chrono::seconds(120));
                    c.ehlo("bench.example");
                    for (std::uint64_t i = t; i < messages; i += injecting_sessions) {
                        std::string to = "u" + std::to_string(i) + "@d" +
                                         std::to_string(i % destinations) + ".example";
                        c.send_mail("sender@example.org", {to},
                                    "From: <sender@example.org>\nTo: <" + to +
                                        ">\nSubject: control-cost\n\ncontrol-cost message\n");
                    }
                    c.quit();
                } catch (const std::exception& e) {
                    errors[static_cast<size_t>(t)] = e.what();
                }
            });
        for (auto& th : threads)
            th.join();
        for (const auto& e : errors)
            if (!e.empty()) throw compat::Error("injecting control-cost mail: " + e);
    };
}

// The admin state file that suspends the smtp transport from the start:
// an earlier version's data_directory/cqmgr-control.json, which cqmgr's
// first start imports into its state store.
void write_suspension(const compat::Instance& inst) {
    nlohmann::json doc = {
        {"version", 1},
        {"suspend", nlohmann::json::array({{{"transport", "smtp"},
                                            {"until", nullptr},
                                            {"reason", "tools/bench --control-cost"},
                                            {"uid", 0}}})},
        {"throttle", nlohmann::json::array()}};
    std::string path = inst.dir() + "/data/cqmgr-control.json";
    compat::write_file(path, doc.dump() + "\n", 0600);
    compat::UserIds postfix = compat::lookup_user("postfix");
    if (::chown(path.c_str(), postfix.uid, postfix.gid) != 0)
        throw compat::sys_error("chown " + path);
}

// Seconds of CPU time used so far by every thread of `pid`, in nanosecond
// steps (the first field of each thread's schedstat).
double cpu_seconds(pid_t pid) {
    std::string task = "/proc/" + std::to_string(pid) + "/task";
    double sum = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(task, ec)) {
        std::string stat;
        if (!compat::read_file_if_exists(e.path().string() + "/schedstat", stat)) continue;
        sum += std::strtod(stat.c_str(), nullptr) / 1e9;
    }
    return sum;
}

// Polls the summary until the active queue holds `messages` messages.
void await_active(ControlLink& link, std::uint64_t messages, int timeout_seconds) {
    double deadline = boot_seconds() + timeout_seconds;
    std::uint64_t seen = 0;
    while (boot_seconds() < deadline) {
        compat::check_interrupted();
        auto r = nlohmann::json::parse(link.request("summary"));
        seen = r.at("active").at("messages").get<std::uint64_t>();
        if (seen >= messages) return;
        pause(0.5);
    }
    throw compat::Error("expected " + std::to_string(messages) +
                        " messages in the active queue within " + std::to_string(timeout_seconds) +
                        " s, found " + std::to_string(seen));
}

// Waits until the daemon is idle: a message counts as active once it is
// read, but its recipients are resolved and assigned after that.
void await_settled(pid_t pid, int timeout_seconds) {
    double deadline = boot_seconds() + timeout_seconds;
    double last = cpu_seconds(pid);
    while (boot_seconds() < deadline) {
        compat::check_interrupted();
        pause(1);
        double now = cpu_seconds(pid);
        if (now - last < 0.005) return;
        last = now;
    }
    throw compat::Error("expected the daemon to go idle within " + std::to_string(timeout_seconds) +
                        " s, found it still busy");
}

// utime and stime of the whole process (10 ms ticks), to split the cost
// between the daemon's own work and the kernel's.
std::pair<double, double> user_system_seconds(pid_t pid) {
    std::string stat;
    compat::read_file_if_exists("/proc/" + std::to_string(pid) + "/stat", stat);
    std::istringstream in(stat.substr(stat.rfind(')') + 2));
    std::string f;
    double user = 0, system = 0;
    for (int i = 3; in >> f; ++i) {
        if (i == 14) user = std::strtod(f.c_str(), nullptr);
        if (i == 15) system = std::strtod(f.c_str(), nullptr);
    }
    static const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
    return {user / tick, system / tick};
}

// One round's figures: the daemon's CPU time per request, the client's wall
// time per request, the reply size.
struct Cost {
    double cpu_ms = 0;
    double wall_ms = 0;
    std::size_t bytes = 0;
};

// Sends one kind of request `repetitions` times; the idle rate is taken off.
Cost measure_round(const Probe& p, ControlLink& link, std::uint16_t metrics_port, pid_t pid,
                   double idle_rate) {
    Cost c;
    double cpu0 = cpu_seconds(pid), t0 = boot_seconds();
    for (int i = 0; i < p.repetitions; ++i) {
        std::string reply = p.line.empty()
                                ? http_get(metrics_port, "/metrics", std::chrono::seconds(10))
                                : link.request(p.line);
        if (!p.line.empty() && reply.rfind("{\"ok\":true", 0) != 0)
            throw compat::Error("expected an ok reply to " + p.line + ", found " +
                                reply.substr(0, 200));
        c.bytes = reply.size();
    }
    double wall = boot_seconds() - t0;
    double cpu = cpu_seconds(pid) - cpu0 - idle_rate * wall;
    c.cpu_ms = cpu / p.repetitions * 1e3;
    c.wall_ms = wall / p.repetitions * 1e3;
    return c;
}

// Wall time of `postqueue -p` over the same queue, stock's closest view.
double postqueue_seconds(const compat::Instance& inst) {
    compat::SpawnOptions o;
    o.argv = {"/usr/sbin/postqueue", "-c", inst.conf_dir(), "-p"};
    double t0 = boot_seconds();
    compat::run_command(o, std::chrono::minutes(5));
    return boot_seconds() - t0;
}

// "%.2f".
std::string fixed(double v, int decimals = 2) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

} // namespace

// Template, instance, fill, measure, table.
int run_control_cost(const Session& session, const RunOptions& opts) {
    const std::uint64_t messages = scaled(20000, session.scale);
    const std::uint64_t destinations = scaled(1000, session.scale);
    const std::uint64_t limit = std::max<std::uint64_t>(20000, messages + 1000);
    std::cout << "control-cost: " << with_commas(messages) << " one-recipient messages over "
              << with_commas(destinations)
              << " destinations, held in the active queue by a suspension of smtp\n"
              << std::flush;

    TemplateSpec t;
    t.label = "control-cost";
    t.qmgr_enabled = false;
    t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
    t.inject = injector(messages, destinations);
    t.ready = {{"incoming", messages}};
    t.queues = {"incoming"};
    double tp = boot_seconds();
    QueueTemplate queue(t, session.verbose);
    std::cout << "  prepared in " << static_cast<int>(boot_seconds() - tp) << " s\n" << std::flush;

    compat::WorkDir dir("/tmp/cqmgr-bench-");
    dir.remove_on_exit(!opts.keep);
    auto ports = compat::allocate_ports(2);
    compat::Instance inst(dir.path());
    compat::InstanceConfig cfg;
    cfg.qmgr = compat::QmgrKind::Cqmgr;
    cfg.cqmgr_path = opts.cqmgr_path;
    cfg.smtpd_port = ports[0];
    cfg.main_cf = {{"cqmgr_metrics_listen", "127.0.0.1:" + std::to_string(ports[1])},
                   {"qmgr_message_active_limit", std::to_string(limit)},
                   {"qmgr_message_recipient_limit", std::to_string(limit)}};
    cfg.master_exit_after = 3600;
    inst.create(cfg);
    write_suspension(inst);
    queue.copy_into(inst);
    inst.start();
    QmgrProbe probe(inst);
    probe.await_start(std::chrono::seconds(30));
    const pid_t pid = probe.usage().pid;

    double deadline = boot_seconds() + 30;
    while (::access((inst.queue_dir() + "/private/cqmgr").c_str(), F_OK) != 0) {
        if (boot_seconds() > deadline)
            throw compat::Error("expected the control socket within 30 s, found none");
        pause(0.05);
    }
    ControlLink link(inst.queue_dir() + "/private/cqmgr", std::chrono::seconds(30));
    tp = boot_seconds();
    await_active(link, messages, 900);
    std::cout << "  " << with_commas(messages) << " messages active after "
              << static_cast<int>(boot_seconds() - tp) << " s\n"
              << std::flush;
    tp = boot_seconds();
    await_settled(pid, 900);
    std::cout << "  idle (recipients resolved and assigned) after "
              << static_cast<int>(boot_seconds() - tp) << " s more\n"
              << std::flush;

    double idle_cpu0 = cpu_seconds(pid), idle_t0 = boot_seconds();
    pause(5);
    double idle_rate = (cpu_seconds(pid) - idle_cpu0) / (boot_seconds() - idle_t0);

    constexpr int rounds = 7;
    const std::vector<Probe> probes = {
        {"summary", "summary", 200},
        {"queues (all transports)", "queues", 40},
        {"jobs (all transports)", "jobs", 40},
        {"deliveries", "deliveries", 200},
        {"metrics scrape", "", 40},
    };
    std::ostringstream table;
    table << "\n### control-cost\n\n"
          << with_commas(messages) << " one-recipient messages over " << with_commas(destinations)
          << " destinations in the active queue (smtp suspended); idle daemon "
          << fixed(idle_rate * 1e3, 3) << " ms CPU per second, taken off.\n\n"
          << rounds
          << " rounds of each; the daemon's CPU time (all threads) per request: "
             "median and lowest round; user/system split over all rounds.\n\n"
          << "| request | per round | daemon CPU per request, median (ms) | lowest (ms) | "
             "user/system | client wall per request, median (ms) | reply size (bytes) "
             "|\n|---|---|---|---|---|---|---|\n";
    for (const auto& p : probes) {
        std::vector<double> cpu, wall;
        std::size_t bytes = 0;
        auto [u0, s0] = user_system_seconds(pid);
        for (int r = 0; r < rounds; ++r) {
            compat::check_interrupted();
            Cost c = measure_round(p, link, ports[1], pid, idle_rate);
            cpu.push_back(c.cpu_ms);
            wall.push_back(c.wall_ms);
            bytes = c.bytes;
        }
        auto [u1, s1] = user_system_seconds(pid);
        table << "| " << p.name << " | " << p.repetitions << " | " << fixed(median(cpu)) << " | "
              << fixed(*std::min_element(cpu.begin(), cpu.end())) << " | "
              << static_cast<int>((u1 - u0) / std::max(u1 - u0 + s1 - s0, 1e-9) * 100 + 0.5)
              << " % / "
              << static_cast<int>((s1 - s0) / std::max(u1 - u0 + s1 - s0, 1e-9) * 100 + 0.5)
              << " % | " << fixed(median(wall)) << " | " << with_commas(bytes) << " |\n";
    }
    double pq = postqueue_seconds(inst);
    table << "\nFor comparison, stock's only view of the same queue, `postqueue -p` (showq "
             "reads every queue file), took "
          << fixed(pq) << " s of wall time.\n";
    probe.sample();
    table << "Daemon peak RSS with the full active queue: "
          << with_commas(probe.usage().peak_rss_kb) << " kB.\n";
    std::cout << table.str() << std::flush;
    inst.stop();
    return 0;
}

} // namespace bench
