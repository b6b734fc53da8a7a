// qf-dump's --envelope mode: what read_envelope() (the queue manager's
// reader) makes of a queue file, batch by batch.
#pragma once

#include <ostream>
#include <string>

namespace qfdump {

// Reads the file open on `fd` in batches of `batch` recipients and prints
// every field; returns 0, or 1 when the reader calls the file corrupt.
int dump_envelope(int fd, const std::string& path, int batch, bool json, std::ostream& out);

} // namespace qfdump
