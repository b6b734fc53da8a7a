// A pre-filled queue, made once per session by a real Postfix instance and
// copied into every measured instance before its master starts: all runs of
// a workload start from the same queue files without injecting them again.
#pragma once

#include "fsutil.hpp"
#include "instance.hpp"
#include "workload.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bench {

struct TemplateSpec {
    std::string label;         // for messages
    bool qmgr_enabled = false; // false: no queue manager at all while mail is injected
    // main.cf settings; `dead_port` is a loopback port nothing listens on.
    std::function<MainCf(std::uint16_t dead_port)> main_cf;
    // Injects the mail into the instance's smtpd.
    std::function<void(const compat::Instance&, std::uint16_t smtpd_port)> inject;
    // Exact file counts per queue directory that mean the queue is complete.
    std::map<std::string, std::uint64_t> ready;
    std::vector<std::string> queues; // the directories copy_into() copies
    int timeout = 900;               // seconds for injection and readiness together
};

class QueueTemplate {
  public:
    // Runs the instance, injects, waits for `ready`, stops it; throws
    // compat::Error on timeout or failure.
    QueueTemplate(const TemplateSpec& spec, bool verbose);

    // Copies the template's queue directories into `inst` (cp -a: owners,
    // modes and times kept, file names too).
    void copy_into(const compat::Instance& inst) const;
    // Copies the template's directory `from` into the instance's `to` (e.g.
    // incoming files into saved/, where no queue manager looks).
    void copy_queue(const compat::Instance& inst, const std::string& from,
                    const std::string& to) const;
    // The template's queue directory.
    std::string queue_dir() const;

  private:
    std::unique_ptr<compat::WorkDir> dir_;
    std::vector<std::string> queues_;
};

// One-recipient messages to bob@dest.example waiting in incoming: injected
// with no queue manager in master.cf and in_flow_delay = 0 (without a
// queue manager to hand out tokens, cleanup would wait 1 s each).
TemplateSpec incoming_template(const std::string& label, std::uint64_t messages);

// One-recipient messages in deferred with their defer logs: stock qmgr,
// relaying to a port nothing listens on, defers each of `messages` once.
TemplateSpec deferred_template(const std::string& label, std::uint64_t messages);

// Copies a deferred_template() queue into `inst` with every message due now
// (the copies keep the template's future retry times).
void copy_due(const QueueTemplate& t, const compat::Instance& inst);

// Copies the template's incoming files into the deferred/ of `inst`, hashed
// as Postfix hashes short queue IDs (by their first character), owned by
// postfix with the mode of a ready queue file; returns the copies' paths.
std::vector<std::string> copy_incoming_to_deferred(const QueueTemplate& t,
                                                   const compat::Instance& inst);

// Sets the access and modification time of every file below `dir` to
// `seconds_ago` in the past (e.g. deferred messages due for retry now).
void backdate_files(const std::string& dir, int seconds_ago);

} // namespace bench
