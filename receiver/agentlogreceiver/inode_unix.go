// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:build unix

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"os"
	"syscall"
)

// fileIDOf is a file's device and inode: two paths with the same one are
// the same file (hard links, a symlinked directory), and another file at
// the same path has another inode.
func fileIDOf(fi os.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)} //nolint:unconvert,gosec // not uint64 everywhere
	}
	return fileID{}
}
