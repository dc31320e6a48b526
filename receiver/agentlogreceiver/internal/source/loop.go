// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// Loop runs fn at once and then every interval, until Halt.
type Loop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// StartLoop starts a Loop of fn.
func StartLoop(interval time.Duration, fn func(ctx context.Context)) *Loop {
	return StartWatchLoop(interval, nil, fn)
}

// StartWatchLoop starts a Loop of fn that also runs fn when the watcher
// startWatch starts (nil: none) reports a change. The watcher is started in the
// loop, before fn's first run, and closed when the loop ends. A change
// reported while fn runs is one more run after it, however many changes it
// covers.
func StartWatchLoop(interval time.Duration, startWatch func() *watch.Watcher, fn func(ctx context.Context)) *Loop {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Loop{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		var w *watch.Watcher
		if startWatch != nil {
			w = startWatch()
			defer w.Close()
		}
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			w.Reset() // fn reads everything that changed until now
			fn(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			case <-w.Wake():
			}
		}
	}()
	return l
}

// Halt ends the loop; a run under way finishes first, unless ctx ends.
func (l *Loop) Halt(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.cancel()
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done is closed once the loop has ended (after Halt, the run under way
// finished).
func (l *Loop) Done() <-chan struct{} { return l.done }

// RunUntil runs fn, returning early with ctx's error when ctx ends first
// (fn then finishes in the background).
func RunUntil(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FileExists is the probe of sessions kept in files.
func FileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// FileSig tells whether a file changed since it was decoded.
type FileSig struct {
	Mod  time.Time
	Size int64
}

func (s FileSig) String() string { return fmt.Sprintf("%d/%d", s.Mod.UnixNano(), s.Size) }

// SigOf is the signature of a file as it is now.
func SigOf(fi os.FileInfo) FileSig { return FileSig{Mod: fi.ModTime(), Size: fi.Size()} }
