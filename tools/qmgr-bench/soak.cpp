#include "soak.hpp"

#include "actions.hpp"
#include "clock.hpp"
#include "control_link.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "instance.hpp"
#include "mail_setup.hpp"
#include "net.hpp"
#include "process.hpp"
#include "qmgr_probe.hpp"
#include "redis_server.hpp"
#include "signals.hpp"
#include "sink.hpp"
#include "soak_config.hpp"
#include "soak_injector.hpp"
#include "soak_ledger.hpp"
#include "soak_report.hpp"
#include "soak_sampler.hpp"
#include "soak_schedule.hpp"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

namespace bench {
namespace {

namespace fs = std::filesystem;

constexpr double flap_period = 135; // seconds: the flapping receiver is up 90, down 45
constexpr double flap_up = 90;
constexpr double sample_every = 5;
constexpr double scrape_every = 10;
constexpr double progress_every = 60;
constexpr double drain_limit = 900; // seconds the drain may take
constexpr double reflush_every = 60;

// One sending side and what belongs to it; members in reverse teardown
// order (the injector goes first, the receivers last).
struct Side {
    compat::QmgrKind kind = compat::QmgrKind::Stock;
    std::string name;
    std::string dir;
    SoakPorts ports;
    std::map<SoakDest, std::unique_ptr<compat::Sink>> sinks;
    std::unique_ptr<compat::Instance> inst;
    std::unique_ptr<SoakLedger> ledger;
    std::unique_ptr<SoakSampler> sampler;
    std::unique_ptr<SoakInjector> injector;
    bool cqmgr() const { return kind == compat::QmgrKind::Cqmgr; }
};

// "%.Nf".
std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Runs a command to completion; "" on success, else why not.
std::string run_tool(std::vector<std::string> argv, const std::string& log, int timeout) {
    compat::SpawnOptions o;
    o.argv = std::move(argv);
    o.output_path = log;
    try {
        compat::run_command(o, std::chrono::seconds(timeout));
    } catch (const compat::Interrupted&) {
        throw;
    } catch (const compat::Error& e) {
        return e.what();
    }
    return "";
}

// The queue IDs of the files in `queues` of an instance (hashed or not).
std::vector<std::string> queue_ids(const compat::Instance& inst,
                                   const std::vector<std::string>& queues) {
    std::vector<std::string> ids;
    for (const auto& q : queues) {
        std::error_code ec;
        for (fs::recursive_directory_iterator it(inst.queue_dir() + "/" + q, ec), end;
             !ec && it != end; it.increment(ec))
            if (it->is_regular_file(ec)) ids.push_back(it->path().filename());
    }
    return ids;
}

// Message files left in the queue (corrupt/ apart).
std::uint64_t queued_files(const compat::Instance& inst) {
    std::uint64_t n = 0;
    for (const char* q : {"maildrop", "incoming", "active", "deferred", "hold"})
        n += compat::count_files(inst.queue_dir() + "/" + q);
    return n;
}

// `postqueue -j`: each queued message's ID and the recipients it still has.
SoakQueueListing postqueue_listing(const compat::Instance& inst, const std::string& out) {
    SoakQueueListing listing;
    if (!run_tool({"/usr/sbin/postqueue", "-c", inst.conf_dir(), "-j"}, out, 120).empty())
        return listing;
    std::istringstream in(compat::read_file(out));
    std::string line;
    while (std::getline(in, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.contains("queue_id")) continue;
        std::vector<std::string> rcpts;
        for (const auto& r : j.value("recipients", nlohmann::json::array()))
            rcpts.push_back(r.value("address", ""));
        listing.emplace_back(j["queue_id"].get<std::string>(), rcpts);
    }
    return listing;
}

// The sum of a metric's samples in a Prometheus text reply; -1 if absent.
double metric_sum(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    std::string line;
    double sum = -1;
    while (std::getline(in, line)) {
        if (line.rfind(name, 0) != 0) continue;
        char next = line.size() > name.size() ? line[name.size()] : '\0';
        if (next != '{' && next != ' ') continue;
        size_t sp = line.rfind(' ');
        sum = (sum < 0 ? 0 : sum) + std::strtod(line.c_str() + sp + 1, nullptr);
    }
    return sum;
}

// The whole soak; the members are torn down in reverse order.
class Soak {
  public:
    Soak(const RunOptions& opts, const SoakOptions& soak)
        : opts_(opts), soak_(soak), root_("/tmp/cqmgr-bench-soak-") {
        root_.remove_on_exit(!opts.keep);
    }

    int run();

  private:
    void set_up();
    void inject();
    void drain();
    SoakResult finish();
    // Samples, scrapes, log polls and progress lines when due; throws if a
    // master is gone.
    void tick(double now);
    void run_event(const SoakEvent& e);
    std::string control(Side& s, const std::vector<std::string>& args);
    void log_event(const std::string& side, const std::string& what, const std::string& error);
    bool drained() const;

    RunOptions opts_;
    SoakOptions soak_;
    compat::WorkDir root_;
    std::ofstream event_log_;
    std::unique_ptr<RedisServer> redis_;
    std::unique_ptr<compat::Instance> receiver_;
    std::vector<Side> sides_; // stock, cqmgr
    double t0_ = 0;
    double next_sample_ = 0, next_scrape_ = 0, next_progress_ = 0, next_poll_ = 0;
    bool flap_running_ = true;
    int events_ = 0, events_failed_ = 0;
    int scrapes_ = 0, scrapes_failed_ = 0;
    std::string last_metrics_;
    double drain_seconds_ = 0;
    bool drained_ = false;
};

// Ports, Redis, the receivers and both sending instances; returns once
// both queue managers run.
void Soak::set_up() {
    fs::create_directories(soak_.out);
    event_log_.open(soak_.out + "/events.log");
    const auto& dests = soak_destinations();
    // Per side: smtpd, a receiver per destination, metrics; and the
    // receiving instance's own smtpd.
    auto ports = compat::allocate_ports(2 * (dests.size() + 2) + 1);
    size_t next = 0;
    for (auto kind : {compat::QmgrKind::Stock, compat::QmgrKind::Cqmgr}) {
        Side s;
        s.kind = kind;
        s.name = compat::qmgr_kind_name(kind);
        s.dir = root_.path() + "/" + s.name;
        compat::make_dir(s.dir, 0755, 0, 0);
        s.ports.smtpd = ports[next++];
        for (const auto& d : dests)
            s.ports.rx[d.dest] = ports[next++];
        s.ports.metrics = ports[next++];
        sides_.push_back(std::move(s));
    }
    redis_ = std::make_unique<RedisServer>(root_.path());

    compat::UserIds postfix = compat::lookup_user("postfix");
    std::string rx_dir = root_.path() + "/receiver";
    compat::make_dir(rx_dir, 0755, 0, 0);
    receiver_ = std::make_unique<compat::Instance>(rx_dir);
    compat::InstanceConfig rc;
    rc.qmgr_enabled = false;
    rc.smtpd_port = ports[next++];
    rc.main_cf = soak_receiver_main_cf();
    std::vector<SoakPorts> all;
    for (const auto& s : sides_)
        all.push_back(s.ports);
    rc.master_cf = soak_receiver_master_cf(all);
    rc.master_exit_after = static_cast<int>(soak_.duration + drain_limit) + 600;
    receiver_->create(rc);
    receiver_->start();

    for (auto& s : sides_) {
        compat::make_dir(s.dir + "/sinks", 0755, 0, 0);
        for (const auto& d : dests) {
            auto args = soak_sink_args(d.dest);
            if (!args) continue;
            // The fast sink also receives the Many destinations' mail, at
            // their own loopback addresses.
            compat::SinkSpec spec = sink_spec(
                d.name, {},
                d.dest == SoakDest::Fast && soak_.private_network ? "0.0.0.0" : "127.0.0.1");
            spec.start = d.dest != SoakDest::Dead;
            auto sink = std::make_unique<compat::Sink>(spec, s.ports.rx[d.dest],
                                                       s.dir + "/sink-" + d.name + ".log",
                                                       s.dir + "/sinks/" + d.name, postfix);
            sink->configure(*args);
            if (spec.start) sink->start();
            s.sinks[d.dest] = std::move(sink);
        }
        std::string inst_dir = s.dir + "/postfix";
        compat::make_dir(inst_dir, 0755, 0, 0);
        s.inst = std::make_unique<compat::Instance>(inst_dir);
        compat::InstanceConfig cfg;
        cfg.qmgr = s.kind;
        cfg.cqmgr_path = opts_.cqmgr_path;
        cfg.smtpd_port = s.ports.smtpd;
        cfg.main_cf = soak_sender_main_cf(s.cqmgr(), s.ports, s.inst->conf_dir(), redis_->socket());
        if (s.cqmgr())
            for (const auto& kv : opts_.cqmgr_main_cf)
                cfg.main_cf.push_back(kv);
        cfg.master_exit_after = static_cast<int>(soak_.duration + drain_limit) + 600;
        s.inst->create(cfg);
        write_soak_transport(s.inst->conf_dir(), s.ports, soak_.private_network);
        if (s.cqmgr()) write_soak_tables(s.inst->conf_dir(), s.ports);
        s.ledger = std::make_unique<SoakLedger>(s.inst->maillog_path());
        s.sampler = std::make_unique<SoakSampler>(
            *s.inst, s.cqmgr() ? inst_dir + "/data/cqmgr-state.lmdb" : "",
            soak_.out + "/samples-" + s.name + ".tsv");
    }
    for (auto& s : sides_)
        s.inst->start();
    for (auto& s : sides_) {
        QmgrProbe probe(*s.inst);
        probe.await_start(std::chrono::seconds(30));
    }
    if (opts_.verbose) std::cout << "  instances in " << root_.path() << "\n" << std::flush;
}

void Soak::log_event(const std::string& side, const std::string& what, const std::string& error) {
    ++events_;
    if (!error.empty()) ++events_failed_;
    event_log_ << "t=" << fixed(boot_seconds() - t0_, 1) << "s " << side << ": " << what << ": "
               << (error.empty() ? "ok" : "FAILED: " + error) << "\n"
               << std::flush;
    if (opts_.verbose || !error.empty())
        std::cout << "    " << side << ": " << what << (error.empty() ? "" : ": FAILED: " + error)
                  << "\n"
                  << std::flush;
}

// cqmgrctl with "@NAME" replaced by that destination's queue name.
std::string Soak::control(Side& s, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {opts_.cqmgrctl_path, "-c", s.inst->conf_dir()};
    for (const auto& a : args) {
        std::string v = a;
        if (!a.empty() && a[0] == '@')
            for (const auto& d : soak_destinations())
                if (d.name == a.substr(1)) v = soak_queue(s.ports, d.dest);
        argv.push_back(v);
    }
    return run_tool(argv, soak_.out + "/cqmgrctl.log", 30);
}

// Each side in turn; Redis and cqmgrctl concern cqmgr alone.
void Soak::run_event(const SoakEvent& e) {
    if (e.action == SoakAction::RedisRestart) {
        std::string err;
        try {
            redis_->restart();
        } catch (const compat::Interrupted&) {
            throw;
        } catch (const compat::Error& x) {
            err = x.what();
        }
        log_event("cqmgr", describe(e), err);
        return;
    }
    for (auto& s : sides_) {
        if (e.action == SoakAction::Control && !s.cqmgr()) continue;
        const std::string conf = s.inst->conf_dir();
        const std::string log = s.dir + "/commands.log";
        std::string err, what = describe(e);
        switch (e.action) {
        case SoakAction::KillQmgr:
            if (pid_t pid = find_qmgr(s.inst->master_pid()); pid > 0)
                ::kill(pid, SIGKILL);
            else
                err = "no queue manager running";
            break;
        case SoakAction::Reload:
            err = run_tool({"/usr/sbin/postfix", "-c", conf, "reload"}, log, 60);
            break;
        case SoakAction::Requeue:
        case SoakAction::RequeueDeferred: {
            // What may be in delivery when the requeue takes it.
            // The injector goes on meanwhile (a second back covers a
            // message in its SMTP transaction at the listing).
            const std::uint64_t first = s.injector->attempted();
            auto ids = queue_ids(*s.inst, {"incoming", "active"});
            std::vector<std::string> argv = {"/usr/sbin/postsuper", "-c", conf, "-r", "ALL"};
            if (e.action == SoakAction::RequeueDeferred) argv.push_back("deferred");
            err = run_tool(argv, log, 120);
            if (e.action == SoakAction::Requeue) {
                s.ledger->note_requeue(ids);
                const auto back = static_cast<std::uint64_t>(soak_.rate) + 1;
                s.ledger->note_requeue_messages(first > back ? first - back : 0,
                                                s.injector->attempted() + 1);
            }
            // postsuper sends no trigger; pickup would wait for its wakeup.
            if (err.empty()) compat::send_trigger(s.inst->queue_dir() + "/public/pickup", "W");
            what += " (" + std::to_string(ids.size()) + " in incoming and active)";
            break;
        }
        case SoakAction::FlushAll:
            err = run_tool({"/usr/sbin/postqueue", "-c", conf, "-f"}, log, 60);
            break;
        case SoakAction::Control:
            err = control(s, e.args);
            break;
        case SoakAction::RedisRestart:
            break;
        }
        log_event(s.name, what, err);
    }
}

void Soak::tick(double now) {
    double t = now - t0_;
    if (now >= next_poll_) {
        for (auto& s : sides_) {
            s.ledger->poll();
            if (!s.inst->master_alive())
                throw compat::Error(s.name +
                                    ": expected master to keep running, found it gone; "
                                    "maillog tail:\n" +
                                    s.inst->maillog_tail());
        }
        next_poll_ = now + 1;
    }
    if (now >= next_sample_) {
        for (auto& s : sides_)
            s.sampler->sample(t, s.ledger->sent_lines());
        next_sample_ = now + sample_every;
    }
    if (now >= next_scrape_) {
        try {
            last_metrics_ = http_get(sides_[1].ports.metrics, "/metrics", std::chrono::seconds(2));
            ++scrapes_;
        } catch (const compat::Error&) {
            ++scrapes_failed_;
        }
        next_scrape_ = now + scrape_every;
    }
    if (now >= next_progress_) {
        std::cout << "  [" << static_cast<int>(t) << " s]";
        for (auto& s : sides_) {
            const auto& last = s.sampler->samples().back();
            std::cout << " " << s.name << ": " << s.ledger->sent_lines() << " sent, "
                      << s.ledger->deferred_lines() << " deferred, " << last.active << " active, "
                      << last.deferred << " in deferred, qmgr " << fixed(last.rss_kb / 1024.0, 1)
                      << " MB " << last.fds << " fds;";
        }
        std::cout << "\n" << std::flush;
        next_progress_ = now + progress_every;
    }
}

// Mail flows for the duration; the schedule's events happen on the way and
// the flapping receivers go down and up.
void Soak::inject() {
    t0_ = boot_seconds() + 1;
    next_sample_ = next_scrape_ = t0_;
    next_progress_ = t0_ + progress_every;
    for (auto& s : sides_)
        s.injector = std::make_unique<SoakInjector>(s.ports.smtpd, t0_, soak_.rate,
                                                    s.dir + "/injection-failures.log");
    const auto& schedule = soak_schedule();
    size_t next_event = 0;
    for (;;) {
        compat::check_interrupted();
        double now = boot_seconds();
        double t = now - t0_;
        if (t >= soak_.duration) break;
        while (next_event < schedule.size() && t >= schedule[next_event].at * soak_.duration)
            run_event(schedule[next_event++]);
        bool up = std::fmod(std::max(t, 0.0), flap_period) < flap_up;
        if (up != flap_running_) {
            for (auto& s : sides_) {
                auto& sink = *s.sinks.at(SoakDest::Flap);
                if (up)
                    sink.start();
                else
                    sink.stop();
            }
            flap_running_ = up;
        }
        tick(now);
        pause(0.05);
    }
}

bool Soak::drained() const {
    for (const auto& s : sides_)
        if (queued_files(*s.inst) != 0) return false;
    return true;
}

// Injection stops, suspensions and throttles are lifted, every receiver
// comes back (the tarpit without its delay, the dead one for the first
// time), and deferred mail is flushed every minute until both queues are
// empty or the drain runs out of time. The 4xx-at-random and limited
// receivers stay as they are: each retry has its chances.
void Soak::drain() {
    for (auto& s : sides_)
        s.injector->stop();
    double start = boot_seconds();
    for (auto& s : sides_) {
        if (s.cqmgr())
            for (const auto& undo : soak_undo_commands()) {
                SoakEvent e{0, SoakAction::Control, undo};
                log_event(s.name, describe(e) + " (drain)", control(s, undo));
            }
        if (!s.sinks.at(SoakDest::Flap)->running()) s.sinks.at(SoakDest::Flap)->start();
        s.sinks.at(SoakDest::Tarpit)->stop();
        s.sinks.at(SoakDest::Tarpit)->start(soak_healed_tarpit_args());
        s.sinks.at(SoakDest::Dead)->start();
    }
    log_event("both", "receivers healed (flap up, tarpit without delay, dead up)", "");
    double next_flush = 0, next_check = 0;
    for (;;) {
        compat::check_interrupted();
        double now = boot_seconds();
        if (now >= next_flush) {
            for (auto& s : sides_)
                log_event(s.name, "postqueue -f (drain)",
                          run_tool({"/usr/sbin/postqueue", "-c", s.inst->conf_dir(), "-f"},
                                   s.dir + "/commands.log", 60));
            next_flush = now + reflush_every;
        }
        tick(now);
        if (now >= next_check) {
            if (drained()) {
                drained_ = true;
                break;
            }
            next_check = now + 2;
        }
        if (now - start > drain_limit) break;
        pause(0.05);
    }
    drain_seconds_ = boot_seconds() - start;
    std::cout << "  drain: " << (drained_ ? "both queues empty" : "NOT empty") << " after "
              << static_cast<int>(drain_seconds_) << " s\n"
              << std::flush;
}

// The last figures, then the instances stop.
SoakResult Soak::finish() {
    pause(2); // postlogd writes what is still on its way
    double now = boot_seconds();
    next_sample_ = next_scrape_ = next_poll_ = 0;
    tick(now);
    SoakResult r;
    r.duration = soak_.duration;
    r.rate = soak_.rate;
    r.early_from = soak_.duration / 6;
    r.early_to = soak_.duration / 3;
    r.late_from = soak_.duration * 5 / 6;
    r.late_to = soak_.duration;
    r.drained = drained_;
    r.drain_seconds = drain_seconds_;
    r.scrapes = scrapes_;
    r.scrapes_failed = scrapes_failed_;
    r.control_settings_left = metric_sum(last_metrics_, "cqmgr_control_settings");
    compat::write_file(soak_.out + "/metrics-last.txt", last_metrics_);
    for (const auto& e : soak_schedule())
        if (e.action == SoakAction::KillQmgr || e.action == SoakAction::Reload)
            ++r.planned_restarts;
    for (auto& s : sides_) {
        SoakSideResult x;
        x.name = s.name;
        auto listing = postqueue_listing(*s.inst, s.dir + "/postqueue-j.txt");
        x.corrupt = compat::count_files(s.inst->queue_dir() + "/corrupt");
        x.queued = queued_files(*s.inst);
        x.tally = s.ledger->tally(s.injector->attempted(), s.injector->failed(),
                                  s.injector->retried(), listing);
        x.fatal_count = s.ledger->fatal_count();
        x.fatal_lines = s.ledger->fatal_lines();
        x.warnings = s.ledger->qmgr_warnings();
        x.early = s.sampler->window(r.early_from, r.early_to);
        x.late = s.sampler->window(r.late_from, r.late_to);
        double t_end = now - t0_;
        x.end = s.sampler->window(t_end - 60, t_end + 1);
        x.qmgr_processes = s.sampler->pids().size();
        x.sent_lines = s.ledger->sent_lines();
        x.deferred_lines = s.ledger->deferred_lines();
        x.samples_tsv = soak_.out + "/samples-" + s.name + ".tsv";
        r.sides.push_back(std::move(x));
    }
    r.events = events_;
    r.events_failed = events_failed_;
    for (auto& s : sides_)
        s.inst->stop();
    receiver_->stop();
    return r;
}

int Soak::run() {
    std::cout
        << "soak: " << fixed(soak_.duration / 60, 1) << " min of mail at " << fixed(soak_.rate, 1)
        << " messages/s into stock and cqmgr at once (the same messages), to fast, slow, "
           "tarpitting, flapping, 4xx-at-random, connection-limited, bouncing, dead and "
           "ever-new destinations; cqmgr with every cqmgr_ feature on; kills, reloads, postsuper "
           "-r, Redis restarts and cqmgrctl commands on the way; then a drain of at most "
        << static_cast<int>(drain_limit / 60) << " min; figures in " << soak_.out << "\n"
        << std::flush;
    int status = 2;
    try {
        set_up();
        inject();
        drain();
        SoakResult r = finish();
        status = report_soak(r, soak_.out, std::cout) ? 0 : 1;
        if (!drained_ || status != 0) {
            if (opts_.keep_failed) root_.remove_on_exit(false);
        }
    } catch (const compat::Interrupted&) {
        throw;
    } catch (const compat::Error& e) {
        std::cout << "soak: FAILED: " << e.what() << "\n";
        if (opts_.keep_failed) root_.remove_on_exit(false);
    }
    if (!root_.will_remove()) std::cout << "  instances kept in " << root_.path() << "\n";
    return status;
}

} // namespace

int run_soak(const RunOptions& opts, const SoakOptions& soak) {
    Soak s(opts, soak);
    return s.run();
}

} // namespace bench
