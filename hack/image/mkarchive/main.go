// Command mkarchive writes a single-layer container image in docker-archive format (the
// format of `docker save`, which `ctr images import` accepts) from a root file system
// directory, without a Docker daemon or a registry. The layer is deterministic: entries are
// sorted, owned by root and dated at the epoch, so the same inputs give the same image ID.
//
//	mkarchive -rootfs DIR -tag beeburst/tools:dev [-tag ...] [-entrypoint '["/pause"]']
//	          [-cmd '["sh"]'] [-env K=V ...] [-workdir /] -o out.tar
package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var tags, envs multi
	rootfs := flag.String("rootfs", "", "root file system directory")
	out := flag.String("o", "", "output tar")
	entrypoint := flag.String("entrypoint", "", "entrypoint as a JSON array")
	cmd := flag.String("cmd", "", "cmd as a JSON array")
	workdir := flag.String("workdir", "/", "working directory")
	flag.Var(&tags, "tag", "image name:tag (repeatable)")
	flag.Var(&envs, "env", "K=V (repeatable)")
	flag.Parse()
	if *rootfs == "" || *out == "" || len(tags) == 0 {
		fmt.Fprintln(os.Stderr, "usage: mkarchive -rootfs DIR -tag NAME:TAG -o OUT.tar [-entrypoint JSON] [-cmd JSON] [-env K=V]")
		os.Exit(2)
	}
	if err := run(*rootfs, *out, tags, envs, *entrypoint, *cmd, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "mkarchive:", err)
		os.Exit(1)
	}
}

func run(rootfs, out string, tags, envs []string, entrypoint, cmd, workdir string) error {
	layer, err := os.CreateTemp(filepath.Dir(out), ".layer-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(layer.Name())
	h := sha256.New()
	if err := writeLayer(io.MultiWriter(layer, h), rootfs); err != nil {
		return err
	}
	if err := layer.Close(); err != nil {
		return err
	}
	diffID := "sha256:" + hex.EncodeToString(h.Sum(nil))

	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, envs...)
	cfg := map[string]any{"Env": env, "WorkingDir": workdir}
	for key, v := range map[string]string{"Entrypoint": entrypoint, "Cmd": cmd} {
		if v == "" {
			continue
		}
		var a []string
		if err := json.Unmarshal([]byte(v), &a); err != nil {
			return fmt.Errorf("%s must be a JSON array of strings: %w", strings.ToLower(key), err)
		}
		cfg[key] = a
	}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config":       cfg,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history":      []map[string]any{{"created_by": "beeburst hack/image/mkarchive"}},
	})
	if err != nil {
		return err
	}
	cs := sha256.Sum256(config)
	configName := hex.EncodeToString(cs[:]) + ".json"
	layerDir := strings.TrimPrefix(diffID, "sha256:")
	manifest, _ := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": tags, "Layers": []string{layerDir + "/layer.tar"},
	}})

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	epoch := time.Unix(0, 0)
	addBytes := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: layerDir + "/", Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
		return err
	}
	lf, err := os.Open(layer.Name())
	if err != nil {
		return err
	}
	defer lf.Close()
	st, _ := lf.Stat()
	if err := tw.WriteHeader(&tar.Header{Name: layerDir + "/layer.tar", Mode: 0o644, Size: st.Size(), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, lf); err != nil {
		return err
	}
	if err := addBytes(configName, config); err != nil {
		return err
	}
	if err := addBytes("manifest.json", manifest); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// writeLayer tars rootfs (relative names, sorted, root-owned, epoch mtimes).
func writeLayer(w io.Writer, rootfs string) error {
	var paths []string
	err := filepath.WalkDir(rootfs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != rootfs {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(rootfs, p)
		hdr.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "root", "root"
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = epoch, time.Time{}, time.Time{}
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	return tw.Close()
}
