package rctool

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestIncomingName(t *testing.T) {
	tests := []struct {
		raw, want string
	}{
		{"auswertung.csv", "auswertung.csv"},
		{"  bericht q3.pdf  ", "bericht q3.pdf"},
		{"../../etc/passwd", "passwd"},
		{`..\..\Windows\System32\evil.dll`, "evil.dll"},
		{"shared:kopie.csv", "kopie.csv"},                // the prefix is split off first
		{"Personal:kopie.csv", "kopie.csv"},              // in any case
		{"shared:../x/kopie.csv", "kopie.csv"},           //
		{"kopie.csv:Zone.Identifier", "Zone.Identifier"}, // an NTFS stream name is no hiding place
		{"C:evil.txt", "evil.txt"},
		{"x.exe.", "x.exe"},    // Windows drops trailing dots…
		{"x.exe . .", "x.exe"}, // …and spaces
		{"report\u202Efdp.exe", "reportfdp.exe"},
		{"a\x00b\nc.txt", "abc.txt"},
		{"..", ""},
		{".", ""},
		{"dir/", ""},
		{"shared:", ""},
		{" / ", ""},
		{".profile", ".profile"},
	}
	for _, tt := range tests {
		if got := incomingName(tt.raw); got != tt.want {
			t.Errorf("incomingName(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestDangerous(t *testing.T) {
	for _, name := range []string{"a.exe", "A.EXE", "a.pdf.exe", "a.ps1", "a.bat", "a.cmd", "a.sh", "a.jar", "a.msi",
		"a.vbs", "a.js", "a.com", "a.scr", "a.dll", "a.app", "a.apk", "a.ps1xml", "a.psm1", "a.lnk", "a.reg", "a.hta",
		"a.wsf", "a.cpl", "a.msc", "a.iso", "a.AppImage", "a.command"} {
		if !dangerous(name) {
			t.Errorf("dangerous(%q) = false", name)
		}
	}
	for _, name := range []string{"a.csv", "a.pdf", "a.exe.pdf", "a.docx", "a.zip", "a.png", "exe", "a.json", "a.md", "a.txt", "a.py"} {
		if dangerous(name) {
			t.Errorf("dangerous(%q) = true", name)
		}
	}
}

func TestLimitedReader(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 100)
	tests := []struct {
		name    string
		r       io.Reader
		max     int64
		wantN   int64
		wantErr error
	}{
		{"under", bytes.NewReader(data), 200, 100, nil},
		{"exactly", bytes.NewReader(data), 100, 100, nil},
		{"over", bytes.NewReader(data), 99, 100, errTooLarge},
		{"over in one byte reads", iotest.OneByteReader(bytes.NewReader(data)), 10, 11, errTooLarge},
	}
	for _, tt := range tests {
		lr := &limitedReader{r: tt.r, max: tt.max}
		_, err := io.Copy(io.Discard, lr)
		if !errors.Is(err, tt.wantErr) || lr.n != tt.wantN {
			t.Errorf("%s: n %d err %v, want %d %v", tt.name, lr.n, err, tt.wantN, tt.wantErr)
		}
	}
	// A broken body is passed on wrapped, never as io.ErrUnexpectedEOF
	// itself: io.ReadFull would hand that on as "short but complete".
	lr := &limitedReader{r: io.MultiReader(bytes.NewReader(data), iotest.ErrReader(io.ErrUnexpectedEOF)), max: 1000}
	buf := make([]byte, 1000)
	_, err := io.ReadFull(lr, buf)
	if err == io.ErrUnexpectedEOF || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadFull over a broken body: %v (%T)", err, err)
	}
}
