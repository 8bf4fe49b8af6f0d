#!/bin/sh
# The system protoc, so proto_library compiles offline with the same version as libprotobuf.
exec /usr/bin/protoc "$@"
