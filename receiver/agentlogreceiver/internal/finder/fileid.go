// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package finder

// FileID is a file's device and inode (zero where the platform has none).
type FileID struct{ Dev, Ino uint64 }
