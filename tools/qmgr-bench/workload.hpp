// A benchmark workload: the mail a run starts with or receives while it is
// measured, where that mail goes, and the figures it adds to the common ones.
#pragma once

#include "delivery_watch.hpp"
#include "instance.hpp"
#include "metrics.hpp"
#include "scenario.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace compat {
class Sink;
}

namespace bench {

// What the whole session shares.
struct Session {
    double scale = 1;
    int recovery_rate = 120;      // outage-recovery: cqmgr's cqmgr_recovery_rate
    bool private_network = false; // in a private netns: loopback aliases and 0.0.0.0 sinks
    bool verbose = false;
};

// What a workload sees of one run.
struct RunContext {
    compat::Instance& inst;
    compat::QmgrKind kind; // the queue manager of the run
    std::uint16_t smtpd_port = 0;
    std::vector<std::uint16_t> sink_ports; // in the order of Workload::sinks()
    // The sinks themselves, in the same order (a workload may stop one and
    // start it again with other arguments while the run is measured).
    std::vector<compat::Sink*> sinks;
    bool verbose = false;
};

// Mail injected while the run is measured.
class Injection {
  public:
    virtual ~Injection() = default;
    // Called every few milliseconds; does the next bit of injecting and
    // returns true once everything is injected.
    virtual bool step() = 0;
    // boot_seconds() when injection began and ended (0 until then).
    double started = 0;
    double finished = 0;
    // Set by step() once it has killed the queue manager and asked master
    // for a new one: the run then follows the new process (its CPU time and
    // RSS are the run's) and clears the flag.
    bool qmgr_restarted = false;
};

using MainCf = std::vector<std::pair<std::string, std::string>>;

// Servers of a workload's own that run beside its sinks for one run (a DNS
// server, a receiver that enforces limits): started once the instance is
// laid out, before its master, and stopped after it.
class RunFixture {
  public:
    virtual ~RunFixture() = default;
    // Adds the figures the fixture measured; `start` is what the run's
    // drain time counts from.
    virtual void add_metrics(double /*start*/, Metrics&) const {}
};

class Workload {
  public:
    virtual ~Workload() = default;
    virtual std::string name() const = 0;
    // One line: sizes, destinations, how the mail gets there.
    virtual std::string describe() const = 0;
    // Recipients that must be logged status=sent before a run ends.
    virtual std::uint64_t recipients() const = 0;
    // Seconds a run may take before it is abandoned.
    virtual int timeout() const = 0;
    // Once per session before the first run (e.g. building a pre-filled queue).
    virtual void prepare() {}
    // The smtp-sink destinations of a run.
    virtual std::vector<compat::SinkSpec> sinks() const = 0;
    // main.cf settings of a run.
    virtual MainCf main_cf(const RunContext& run) const = 0;
    // master.cf lines added to the instance's (e.g. a receiving smtpd).
    virtual std::vector<std::string> master_cf(const RunContext&) const { return {}; }
    // True when a run may end before all its mail is delivered: what the
    // workload measures is complete (e.g. the destination it measures has
    // drained, while mail to a tarpit would take hours).  By default a run
    // ends once recipients() are delivered and the queue is drained.
    virtual bool measured(const DeliveryWatch&) const { return false; }
    // True if recipients may be deferred on the way (they must still all be
    // delivered in the end); otherwise a deferral fails the run.
    virtual bool deferrals_expected() const { return false; }
    // Files that stay in deferred when the run is over (the run ends once
    // deferred holds exactly this many and the other queues are empty).
    virtual std::uint64_t deferred_at_end() const { return 0; }
    // True to sample, while the run is measured, the files in active/ (every
    // 0.1 s) and the connections to each sink (every 50 ms), and report the
    // peaks as "active_peak" and "connections_peak" (the highest sink's).
    virtual bool watches_peaks() const { return false; }
    // True to put the run's queue directory on a tmpfs (mounted before the
    // instance is laid out, unmounted when it stops, also on failure).
    virtual bool queue_on_tmpfs() const { return false; }
    // False when a run ends before its mail is delivered (measured() says
    // so) and drain time, rate and first delivery mean nothing.
    virtual bool reports_delivery() const { return true; }
    // Before master starts: fill the queue, write lookup tables.
    virtual void populate(const RunContext&) const {}
    // After populate(), before master starts: the run's own servers
    // (nullptr: none).
    virtual std::unique_ptr<RunFixture> fixture(const RunContext&) const { return nullptr; }
    // True if smtp(8) must follow MX records from the run's DNS server: the
    // session then gives every process it starts a resolv.conf of its own
    // (netns.hpp, use_private_resolver()).
    virtual bool follows_mx() const { return false; }
    // True if injection() returns mail to inject while the run is measured.
    virtual bool live_injection() const { return false; }
    // Mail to inject once the queue manager runs (nullptr: none).
    virtual std::unique_ptr<Injection> injection(const RunContext&) const { return nullptr; }
    // What drain time and first delivery count from, for the tables: the
    // injection's `started` with live_injection(), else the queue
    // manager's start.
    virtual std::string measured_from() const {
        return live_injection() ? "first injection" : "queue-manager start";
    }
    // Recipients whose delay= the watch collects ("" for none).
    virtual std::string tag() const { return ""; }
    // Figures beyond the common ones, in table order.
    virtual std::vector<MetricDef> extra_metrics() const { return {}; }
    // Computes those figures at the end of a run.
    virtual void add_metrics(const DeliveryWatch&, const Injection*, Metrics&) const {}
};

// The workloads by name: with `all`, every one; otherwise those run by
// default (flush, fanout, deferred-restart, intake, slow-receiver).
std::vector<std::string> workload_names(bool all);

// Creates a workload; throws compat::Error naming the known ones if `name` is not one.
std::unique_ptr<Workload> make_workload(const std::string& name, const Session& session);

} // namespace bench
