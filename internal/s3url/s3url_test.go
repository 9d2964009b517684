package s3url

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	l, err := ParseURL("s3://bucket/run-7/out/?endpoint=http%3A%2F%2F10.0.0.1%3A9000&region=eu-1&env-prefix=S3_1_")
	if err != nil {
		t.Fatal(err)
	}
	if l != (Location{Bucket: "bucket", Prefix: "run-7/out", Endpoint: "http://10.0.0.1:9000", Region: "eu-1", EnvPrefix: "S3_1_"}) || l.String() != "s3://bucket/run-7/out" {
		t.Fatalf("%+v", l)
	}
	if l, err := ParseURL("s3://bucket"); err != nil || l.Prefix != "" || l.Key("a/b") != "a/b" {
		t.Fatalf("%+v %v", l, err)
	}
	for bad, want := range map[string]string{
		"/data":                              "is not an s3:// URL",
		"s3://":                              "names no bucket",
		"s3:///x":                            "names no bucket",
		"s3://bucket/a/../c":                 "must not contain '..'",
		"s3://b/x":                           `bucket "b" is not an S3 bucket name`,
		"s3://Bucket/x":                      `bucket "Bucket" is not an S3 bucket name`,
		"s3://bucket/a//b":                   "empty or '.' segment",
		"s3://bucket/a/./b":                  "empty or '.' segment",
		"s3://bucket/a#b":                    "must not contain '#'",
		"s3://bucket/a\nb":                   "control character at byte 13",
		"s3://bucket?region=eu%01":           `parameter "region" has a control character`,
		"s3://bucket?region=a%20b":           `region "a b" has white space`,
		"s3://bucket?endpiont=x":             `unknown parameter "endpiont"`,
		"s3://bucket?region=a&region=b":      "given 2 times",
		"s3://bucket?endpoint=ftp%3A%2F%2Fh": "is not an http(s) URL of a server",
		"s3://bucket?endpoint=http%3A%2F%2Fh%2Fpath": "is not an http(s) URL of a server",
		"s3://bucket?env-prefix=S3-1":                "is not the start of a variable name",
	} {
		if _, err := ParseURL(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", bad, err, want)
		}
	}
	if got := l.URL(); got != "s3://bucket/run-7/out?endpoint=http%3A%2F%2F10.0.0.1%3A9000&env-prefix=S3_1_&region=eu-1" {
		t.Errorf("URL() = %s", got)
	}
	if again, err := ParseURL(l.URL()); err != nil || again != l {
		t.Errorf("round trip: %+v, %v", again, err)
	}
	if l.Key("x") != "run-7/out/x" {
		t.Fatal(l.Key("x"))
	}
}
