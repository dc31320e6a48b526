// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:build !(darwin || dragonfly || freebsd || netbsd || openbsd)

package watch

// Supported: the platform reports changes per directory (inotify,
// ReadDirectoryChangesW, FEN), at no cost per file.
const Supported = true
