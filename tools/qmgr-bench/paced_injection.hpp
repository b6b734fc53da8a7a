// Mail injected over one SMTP session while a run is measured: a first
// batch all at once, then one message at a time at a fixed interval (the
// slow-receiver and urgent-amid-bulk workloads).
#pragma once

#include "smtp_client.hpp"
#include "workload.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace bench {

class PacedInjection : public Injection {
  public:
    // Sends the first batch.
    using SendFirst = std::function<void(compat::SmtpClient&)>;
    // Sends paced message number `i` (from 0).
    using SendNext = std::function<void(compat::SmtpClient&, std::uint64_t i)>;

    // `paced` messages, one every `interval` seconds after the first batch.
    PacedInjection(std::uint16_t port, SendFirst first, std::uint64_t paced, double interval,
                   SendNext next)
        : port_(port), first_(std::move(first)), paced_(paced), interval_(interval),
          next_(std::move(next)) {}

    // First call: connect and send the first batch; later calls: the next
    // paced message when it is due; done after the last one and QUIT.
    bool step() override;

    // boot_seconds() at which paced message `i` was due to be sent (after
    // the first batch, one every interval); 0 before the first step.
    double scheduled(std::uint64_t i) const {
        return first_due_ == 0 ? 0 : first_due_ + static_cast<double>(i) * interval_;
    }

  private:
    std::uint16_t port_;
    SendFirst first_;
    std::uint64_t paced_;
    double interval_;
    SendNext next_;
    std::optional<compat::SmtpClient> client_;
    std::uint64_t sent_ = 0;
    double due_ = 0;
    double first_due_ = 0;
};

// Sends message `i` from `sender` to PREFIX<i>@DOMAIN, a short message
// whose subject is `prefix`.
PacedInjection::SendNext one_recipient(std::string sender, std::string prefix, std::string domain);

class DeliveryWatch;

// For each recipient PREFIX<i>@... that `w` saw delivered, the seconds from
// when `inj` was due to send message i to when the delivery was seen: what
// a sender submitting at that pace waits, including any time the server
// took to accept the message (which the maillog's delay= leaves out when
// the injection falls behind).
std::vector<double> submission_to_delivery(const PacedInjection& inj, const DeliveryWatch& w,
                                           const std::string& prefix);

} // namespace bench
