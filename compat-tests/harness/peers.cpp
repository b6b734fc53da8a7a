// More sending instances beside the run's own (see peers.hpp).
#include "peers.hpp"

#include "error.hpp"
#include "fsutil.hpp"
#include "maillog.hpp"
#include "net.hpp"
#include "outcome.hpp"
#include "sanitizer.hpp"
#include "signals.hpp"

#include <thread>

namespace compat {
namespace {

// The status=sent lines and the problem lines of a maillog.
struct Tally {
    int sent = 0;
    std::vector<std::string> problems;
};

Tally tally(const std::string& maillog_path) {
    Tally t;
    std::string text;
    read_file_if_exists(maillog_path, text);
    for (const auto& raw : split_lines(text)) {
        auto l = parse_log_line(raw);
        if (!l) continue;
        if (!l->queue_id.empty())
            if (auto d = parse_delivery(l->text); d && d->status == "sent") t.sent++;
        if (is_problem_line(l->program, l->text)) t.problems.push_back(raw);
    }
    return t;
}

} // namespace

Peers::Peers(const PeersSpec& spec, InstanceConfig cfg, const std::string& dir)
    : spec_(spec), cfg_(std::move(cfg)) {
    auto ports = allocate_ports(static_cast<size_t>(spec_.count));
    for (int k = 1; k <= spec_.count; k++) {
        std::string d = dir + "/peer-" + std::to_string(k);
        make_dir(d, 0755, 0, 0);
        peers_.push_back({std::make_unique<Instance>(d), ports[static_cast<size_t>(k - 1)]});
    }
}

Peers::~Peers() {
    stop();
}

void Peers::start() {
    for (size_t i = 0; i < peers_.size(); i++) {
        InstanceConfig c = cfg_;
        c.smtpd_port = peers_[i].port;
        c.main_cf.emplace_back("myhostname", "peer" + std::to_string(i + 1) + ".test.example");
        peers_[i].inst->create(c);
        peers_[i].inst->start();
    }
}

void Peers::stop() noexcept {
    for (auto& p : peers_)
        p.inst->stop();
}

std::string Peers::missing(const Peer& p) const {
    std::string out;
    Tally t = tally(p.inst->maillog_path());
    if (spec_.sent && t.sent < *spec_.sent)
        out += "sent=" + std::to_string(*spec_.sent) + " (found " + std::to_string(t.sent) + ")";
    QueueCounts q = p.inst->queue_counts();
    for (const char* d : {"incoming", "active", "maildrop"})
        if (q.at(d) != 0)
            out += std::string(out.empty() ? "" : "; ") + d + " empty (found " +
                   std::to_string(q.at(d)) + " files)";
    return out;
}

void Peers::wait(std::chrono::steady_clock::time_point deadline) const {
    for (;;) {
        check_interrupted();
        std::string want;
        for (size_t i = 0; i < peers_.size(); i++)
            if (std::string m = missing(peers_[i]); !m.empty())
                want += (want.empty() ? "" : "; ") + ("peer " + std::to_string(i + 1) + ": " + m);
        if (want.empty()) return;
        if (std::chrono::steady_clock::now() >= deadline)
            throw Error("timed out waiting for the peers: " + want);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

std::vector<std::string> Peers::summary() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < peers_.size(); i++) {
        Tally t = tally(peers_[i].inst->maillog_path());
        std::string left;
        for (const auto& [dir, n] : peers_[i].inst->queue_counts())
            if (n != 0) left += " " + dir + "=" + std::to_string(n);
        out.push_back("peer " + std::to_string(i + 1) + ": sent=" + std::to_string(t.sent) +
                      ", queue files left:" + (left.empty() ? " none" : left));
    }
    return out;
}

std::vector<std::string> Peers::failures() const {
    std::vector<std::string> f;
    for (size_t i = 0; i < peers_.size(); i++) {
        const Instance& inst = *peers_[i].inst;
        std::string who = "peer " + std::to_string(i + 1) + ": ";
        Tally t = tally(inst.maillog_path());
        if (spec_.sent && t.sent != *spec_.sent)
            f.push_back(who + "expected " + std::to_string(*spec_.sent) +
                        " status=sent lines, found " + std::to_string(t.sent));
        for (const auto& p : t.problems)
            f.push_back(who + "expected no fatal, panic or crash line, found: " + p);
        if (spec_.queue_empty)
            for (const auto& [dir, n] : inst.queue_counts())
                if (n != 0 && std::find(message_queues().begin(), message_queues().end(), dir) !=
                                  message_queues().end())
                    f.push_back(who + "expected queue directory " + dir + " empty, found " +
                                std::to_string(n) + " files");
        if (cfg_.sanitizer_reports)
            for (const auto& r : sanitizer_reports(inst.sanitizer_dir()))
                f.push_back(who + r);
    }
    return f;
}

} // namespace compat
