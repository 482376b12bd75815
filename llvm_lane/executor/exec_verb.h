// The checker's EXEC verb (docs/llvm_lane.md#checker-protocol): one module, one launch, its
// buffers in and out, answered on stdout.
#pragma once

#include <istream>
#include <string>

namespace kemit::exec {

// Serves one request whose first line (`EXEC\t<bytes>\t<name>`) is `header`; false when the
// stream is out of protocol (the checker then exits 2 and the controller respawns it).
bool serve_exec_request(const std::string& header, std::istream& in);

// Serves one DIGEST request (`DIGEST\t<bytes>\t<name>`): the digest of the module's decoded
// kernels, equal for two texts that run alike; false when the stream is out of protocol.
bool serve_digest_request(const std::string& header, std::istream& in);

// Serves one WITNESS request (`WITNESS\t<bytes>\t<name>`): a witness run at real size of the
// module's chosen workgroups; false when the stream is out of protocol.
bool serve_witness_request(const std::string& header, std::istream& in);

}  // namespace kemit::exec
