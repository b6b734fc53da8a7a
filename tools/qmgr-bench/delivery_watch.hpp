// Follows an instance's maillog while a run is measured: per-recipient
// outcomes, when the first and the last delivery were seen, and the logged
// delay of the recipients a workload tags.
#pragma once

#include "maillog.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

class DeliveryWatch {
  public:
    // Recipients whose address starts with `tag` (if not empty) have their
    // delay= collected.
    DeliveryWatch(std::string maillog, std::string tag);

    // Reads the lines appended since the last call; a delivery seen now is
    // stamped with boot_seconds() (so poll often: the stamp is when it was seen).
    void poll();

    std::uint64_t sent() const { return sent_; }
    // status=deferred lines (a recipient deferred twice counts twice).
    std::uint64_t deferred() const { return deferred_; }
    // Recipients with any other final or temporary status (deferred, bounced, ...).
    std::uint64_t not_sent() const { return not_sent_; }
    // The first such line, for error messages.
    const std::string& first_not_sent() const { return first_not_sent_; }
    // The first line with a status other than sent or deferred ("" if
    // none), for error messages where deferrals are expected.
    const std::string& first_neither() const { return first_neither_; }
    // A fatal or panic line of any Postfix program, "" if none.
    const std::string& first_fatal() const { return first_fatal_; }
    // boot_seconds() when the first/last status=sent line was seen; 0 if none yet.
    double first_sent_at() const { return first_sent_at_; }
    double last_sent_at() const { return last_sent_at_; }
    // delay= of each tagged recipient delivered so far, in seconds.
    const std::vector<double>& tagged_delays() const { return tagged_delays_; }
    // Tagged recipients delivered so far, and boot_seconds() when the last
    // was seen (0 if none yet).
    std::uint64_t tagged_sent() const { return tagged_delays_.size(); }
    double tagged_last_sent_at() const { return tagged_last_sent_at_; }
    // The tagged recipients delivered so far, in the order seen, with
    // boot_seconds() when each was seen (parallel to tagged_delays()).
    const std::vector<std::string>& tagged_recipients() const { return tagged_recipients_; }
    const std::vector<double>& tagged_seen_at() const { return tagged_seen_at_; }

  private:
    void account(const std::string& line, double now);

    compat::MaillogTail tail_;
    std::string tag_;
    std::uint64_t sent_ = 0;
    std::uint64_t deferred_ = 0;
    std::uint64_t not_sent_ = 0;
    std::string first_not_sent_;
    std::string first_neither_;
    std::string first_fatal_;
    double first_sent_at_ = 0;
    double last_sent_at_ = 0;
    std::vector<double> tagged_delays_;
    std::vector<std::string> tagged_recipients_;
    std::vector<double> tagged_seen_at_;
    double tagged_last_sent_at_ = 0;
};

} // namespace bench
