// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:build unix

package finder

import (
	"os"
	"syscall"
)

// IDOf is a file's device and inode: two paths with the same one are
// the same file (hard links, a symlinked directory), and another file at
// the same path has another inode.
func IDOf(fi os.FileInfo) FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)} //nolint:unconvert // not uint64 on every platform
	}
	return FileID{}
}
