// One recipient as the scheduler carries it in its entries: what a delivery
// request, a deferral and the logs need, and where its R record is in the
// queue file so that it can be marked done.  The core never looks inside;
// it groups recipients into entries and hands them back to its driver.
//
// No dependencies: the queue-file library reads its recipients into this
// same struct (queuefile::Recipient is an alias), so the core needs nothing
// of that library.
#pragma once

#include <cstdint>
#include <string>

namespace cqmgr::core {

struct Recipient {
    int64_t offset = 0; // file offset of the R record's type byte
    std::string address;
    std::string orig_rcpt;
    std::string dsn_orcpt;
    int notify_flags = 0;
};

} // namespace cqmgr::core
