// One side's account of the soak, from its maillog: which queue file holds
// which soak message (cleanup's message-id= line; a message requeued by
// postsuper -r gets a new queue ID and keeps its Message-ID), every final
// status of every recipient, fatal and panic lines, and the queue manager's
// and master's warnings. The tally then sets each recipient the injection sent against
// what became of it.
#pragma once

#include "maillog.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bench {

// What became of the recipients of one side.
struct SoakTally {
    std::uint64_t messages = 0;   // accepted by the side's smtpd
    std::uint64_t recipients = 0; // theirs
    std::uint64_t delivered = 0;  // sent exactly once, as expected
    std::uint64_t bounced = 0;    // bounced exactly once, as expected
    // Recipients with more than one final status: of messages that
    // postsuper -r requeued while they were in incoming or active (stock
    // makes those too), of messages the injection had to send again, and
    // the others.
    std::uint64_t duplicates_requeue = 0;
    std::uint64_t duplicates_injection = 0;
    std::uint64_t duplicates_other = 0;
    std::uint64_t wrong = 0;           // bounced or expired where delivery was due, or the reverse
    std::uint64_t left = 0;            // no final status; still in the queue at the end
    std::uint64_t lost = 0;            // no final status, and not in the queue either
    std::vector<std::string> examples; // a few of the recipients behind the bad counts
};

// The queue at the end: queue ID and recipients of each message
// `postqueue -j` lists.
using SoakQueueListing = std::vector<std::pair<std::string, std::vector<std::string>>>;

class SoakLedger {
  public:
    explicit SoakLedger(std::string maillog) : tail_(std::move(maillog)) {}

    // Reads the lines appended since the last call.
    void poll();
    // The queue files postsuper -r is about to requeue that may be in
    // delivery (those in incoming and active).
    void note_requeue(const std::vector<std::string>& queue_ids);
    // Messages first .. last - 1 were being injected while postsuper -r
    // ran: a message queued after the listing above and requeued from
    // incoming or active may be in delivery too.
    void note_requeue_messages(std::uint64_t first, std::uint64_t last);

    // Sets messages 0 .. attempted - 1, less `failed`, against the log and
    // the queue left at the end.
    SoakTally tally(std::uint64_t attempted, const std::set<std::uint64_t>& failed,
                    const std::set<std::uint64_t>& retried, const SoakQueueListing& queued) const;

    std::uint64_t sent_lines() const { return sent_lines_; }
    std::uint64_t deferred_lines() const { return deferred_lines_; }
    std::uint64_t fatal_count() const { return fatal_count_; }
    // The first fatal and panic lines (up to 20).
    const std::vector<std::string>& fatal_lines() const { return fatal_lines_; }
    // The queue manager's and master's warnings with numbers masked, most
    // frequent first.
    std::vector<std::pair<std::string, std::uint64_t>> qmgr_warnings() const;

  private:
    struct Final {
        std::string queue_id;
        std::string to;
        std::string status; // sent, bounced, expired, ...
    };
    void account(const std::string& raw);

    compat::MaillogTail tail_;
    std::unordered_map<std::string, std::uint64_t> message_of_; // queue ID -> soak message
    std::vector<Final> finals_;
    std::set<std::string> requeued_ids_;
    std::set<std::uint64_t> requeued_messages_;
    std::uint64_t sent_lines_ = 0;
    std::uint64_t deferred_lines_ = 0;
    std::uint64_t fatal_count_ = 0;
    std::vector<std::string> fatal_lines_;
    std::map<std::string, std::uint64_t> warnings_;
};

} // namespace bench
