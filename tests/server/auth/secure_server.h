// Test helpers for the security tests: a real lm-server (Server::Start, in-process, loopback)
// with a tokens file, channels that send a given token, and a generic call by method name.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "proto/client_channel.h"
#include "proto/grpc_status.h"
#include "server/server.h"
#include "tests/server/auth/test_tokens.h"
#include "worker/agent/grpc_server_client.h"

namespace lmtrain::testing {

// A plaintext channel to 127.0.0.1:port sending `token` ("" = none).
inline std::shared_ptr<grpc::Channel> TokenChannel(int port, const std::string& token) {
  ClientChannelOptions o;
  o.target = "127.0.0.1:" + std::to_string(port);
  o.token = token;
  return ClientChannelFactory::Create(o).value().NewChannel();
}

// The same, made afresh on each call (for GrpcServerClient).
inline GrpcServerClient::ChannelMaker TokenChannelMaker(int port, const std::string& token) {
  return [port, token] { return TokenChannel(port, token); };
}

// Calls `method` with the serialized `request` over `channel` (any RPC type: on the wire a
// call is initial metadata, messages and a status). Returns the call's status; a stream that
// is still open 300 ms after its first message is cancelled and reported as OK (served).
inline grpc::Status CallByName(const std::shared_ptr<grpc::Channel>& channel,
                               const std::string& method, const std::string& request,
                               int deadline_ms = 5000) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, deadline_ms);
  auto wait = [&cq](intptr_t tag) {
    void* got = nullptr;
    bool ok = false;
    EXPECT_TRUE(cq.Next(&got, &ok));
    EXPECT_EQ(reinterpret_cast<intptr_t>(got), tag);
    return ok;
  };
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(&ctx, method, &cq);
  call->StartCall(reinterpret_cast<void*>(1));
  bool served = false;
  if (wait(1)) {
    grpc::Slice slice(request);
    grpc::ByteBuffer buffer(&slice, 1);
    call->Write(buffer, reinterpret_cast<void*>(2));
    if (wait(2)) {
      call->WritesDone(reinterpret_cast<void*>(3));
      wait(3);
    }
    grpc::ByteBuffer response;
    call->Read(&response, reinterpret_cast<void*>(4));
    served = wait(4);
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  bool still_open = false;
  if (served) {
    void* got = nullptr;
    bool ok = false;
    const auto next =
        cq.AsyncNext(&got, &ok, std::chrono::system_clock::now() + std::chrono::milliseconds(300));
    still_open = next == grpc::CompletionQueue::TIMEOUT;
    if (still_open) ctx.TryCancel();
  }
  if (!served || still_open) wait(5);
  cq.Shutdown();
  void* tag;
  bool ok;
  while (cq.Next(&tag, &ok)) {
  }
  return still_open ? grpc::Status::OK : status;
}

}  // namespace lmtrain::testing
