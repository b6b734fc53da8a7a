#include "soak_ledger.hpp"

#include "soak_traffic.hpp"

#include <algorithm>
#include <cctype>

namespace bench {
namespace {

// A warning's text with queue IDs replaced by "ID" and every run of
// digits by "N", so that lines differing only in queue IDs, pids, ports,
// counts and times count together.
std::string masked(const std::string& text) {
    std::string out, word;
    auto flush_word = [&] {
        bool digits = std::all_of(word.begin(), word.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        });
        if (!digits && compat::looks_like_queue_id(word)) {
            out += "ID";
        } else {
            bool in_digits = false;
            for (char c : word) {
                bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
                if (digit && !in_digits) out += 'N';
                if (!digit) out += c;
                in_digits = digit;
            }
        }
        word.clear();
    };
    for (char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            word += c;
        } else {
            flush_word();
            out += c;
        }
    }
    flush_word();
    return out;
}

} // namespace

void SoakLedger::poll() {
    for (const auto& l : tail_.read_new_lines())
        account(l);
}

void SoakLedger::note_requeue(const std::vector<std::string>& queue_ids) {
    requeued_ids_.insert(queue_ids.begin(), queue_ids.end());
}

void SoakLedger::note_requeue_messages(std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t n = first; n < last; ++n)
        requeued_messages_.insert(n);
}

// Fatal and panic lines of any program; the rest only from lines with a
// queue ID (message-id= and to=), and the queue manager's and master's
// warnings.
void SoakLedger::account(const std::string& raw) {
    if (raw.find("]: fatal: ") != std::string::npos ||
        raw.find("]: panic: ") != std::string::npos) {
        if (fatal_lines_.size() < 20) fatal_lines_.push_back(raw);
        ++fatal_count_;
        return;
    }
    auto line = compat::parse_log_line(raw);
    if (!line) return;
    if (line->queue_id.empty()) {
        if ((line->service == "qmgr" || line->service == "master") &&
            line->text.starts_with("warning: "))
            ++warnings_[masked(line->text)];
        return;
    }
    if (line->text.starts_with("message-id=")) {
        if (auto n = soak_message_number(line->text)) message_of_[line->queue_id] = *n;
        return;
    }
    if (line->service == "qmgr" && line->text.starts_with("warning: ")) {
        ++warnings_[masked(line->text)];
        return;
    }
    if (!line->text.starts_with("to=<")) return;
    auto d = compat::parse_delivery(line->text);
    if (!d) return;
    if (d->status == "deferred") {
        ++deferred_lines_;
        return;
    }
    if (d->status == "sent") ++sent_lines_;
    finals_.push_back({line->queue_id, d->to, d->status});
}

SoakTally SoakLedger::tally(std::uint64_t attempted, const std::set<std::uint64_t>& failed,
                            const std::set<std::uint64_t>& retried,
                            const SoakQueueListing& queued) const {
    using Key = std::pair<std::uint64_t, std::string>;
    struct Seen {
        int sent = 0;
        int bounced = 0;
        int other = 0;
    };
    std::map<Key, Seen> seen;
    for (const auto& f : finals_) {
        auto it = message_of_.find(f.queue_id);
        if (it == message_of_.end()) continue; // a bounce notice, or not the soak's
        Seen& s = seen[{it->second, f.to}];
        if (f.status == "sent")
            ++s.sent;
        else if (f.status == "bounced")
            ++s.bounced;
        else
            ++s.other;
    }
    std::set<Key> in_queue;
    for (const auto& [id, rcpts] : queued)
        if (auto it = message_of_.find(id); it != message_of_.end())
            for (const auto& r : rcpts)
                in_queue.insert({it->second, r});
    std::set<std::uint64_t> requeued = requeued_messages_;
    for (const auto& id : requeued_ids_)
        if (auto it = message_of_.find(id); it != message_of_.end()) requeued.insert(it->second);

    SoakTally t;
    auto example = [&](const std::string& what, std::uint64_t n, const std::string& to) {
        if (t.examples.size() < 12)
            t.examples.push_back(what + ": message " + std::to_string(n) + " <" + to + ">");
    };
    for (std::uint64_t n = 0; n < attempted; ++n) {
        if (failed.count(n)) continue;
        ++t.messages;
        for (const auto& r : soak_message(n, false).recipients) {
            ++t.recipients;
            auto it = seen.find({n, r.address});
            Seen s = it == seen.end() ? Seen{} : it->second;
            int finals = s.sent + s.bounced + s.other;
            if (finals == 0) {
                if (in_queue.count({n, r.address})) {
                    ++t.left;
                    example("left", n, r.address);
                } else {
                    ++t.lost;
                    example("lost", n, r.address);
                }
                continue;
            }
            bool right = r.bounces ? (s.bounced > 0 && s.sent == 0 && s.other == 0)
                                   : (s.sent > 0 && s.bounced == 0 && s.other == 0);
            if (!right) {
                ++t.wrong;
                example("wrong status", n, r.address);
                continue;
            }
            if (finals == 1) {
                ++(r.bounces ? t.bounced : t.delivered);
            } else if (requeued.count(n)) {
                ++t.duplicates_requeue;
            } else if (retried.count(n)) {
                ++t.duplicates_injection;
            } else {
                ++t.duplicates_other;
                example("duplicate", n, r.address);
            }
        }
    }
    return t;
}

std::vector<std::pair<std::string, std::uint64_t>> SoakLedger::qmgr_warnings() const {
    std::vector<std::pair<std::string, std::uint64_t>> v(warnings_.begin(), warnings_.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return v;
}

} // namespace bench
