// Postfix's attribute protocol, spoken on every local socket qmgr uses:
// the decoded list model, the encoder and the incremental decoder.
// The null-terminated format ("attr_print0") is the default everywhere;
// the plain and base64 formats are available through AttrFormat.
#pragma once

#include "cqmgr/protocol/attr_list.hpp"
#include "cqmgr/protocol/attr_parser.hpp"
#include "cqmgr/protocol/attr_writer.hpp"
