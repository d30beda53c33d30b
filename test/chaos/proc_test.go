package chaos

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// proc is one wds process (serve or worker) started the way a deployment starts it: the binary, its
// environment, its own log file.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
	// metrics is the address of its /metrics listener (WDS_METRICS_ADDR).
	metrics string
	// bin is the wds binary it runs.
	bin string
}

// start launches bin with args; the test's cleanup ends it if the scenario has not.
func start(t *testing.T, dir, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{}), bin: bin}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

// exited reports how the process ended, or nil while it runs.
func (p *proc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v): %s", p.name, p.err, p.tail())
	default:
		return nil
	}
}

// stop ends the process as an orchestrator does: SIGTERM, then SIGKILL after 30 s.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill()
	}
}

// kill ends the process at once, with no chance to finish or record what it was doing.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// tail is the end of the process's log, for failure messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(bytes.TrimSpace(b))
}
