package cofake

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"html"
	"path"
	"regexp"
	"strings"
)

// render builds a small real document of format from the input: CSV input
// becomes rows and cells, anything else lines of text (HTML without tags).
func render(format, fileName string, in []byte) ([]byte, error) {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(fileName), "."))
	rows := inputRows(ext, in)
	switch format {
	case "pdf":
		return renderPDF(fileName, rows), nil
	case "xlsx":
		return renderXLSX(rows)
	case "docx":
		return renderDOCX(rows)
	case "ods":
		return renderODF("application/vnd.oasis.opendocument.spreadsheet", odsContent(rows))
	case "odt":
		return renderODF("application/vnd.oasis.opendocument.text", odtContent(rows))
	case "html":
		return renderHTML(fileName, rows, ext == "csv"), nil
	}
	return nil, fmt.Errorf("cofake: no export filter for %q", format)
}

var tags = regexp.MustCompile(`(?s)<[^>]*>`)

func inputRows(ext string, in []byte) [][]string {
	if ext == "csv" {
		r := csv.NewReader(bytes.NewReader(in))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		if rows, err := r.ReadAll(); err == nil {
			return rows
		}
	}
	text := string(in)
	if ext == "html" || ext == "htm" {
		text = html.UnescapeString(tags.ReplaceAllString(text, "\n"))
	}
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			rows = append(rows, []string{line})
		}
	}
	return rows
}

func lines(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "\t")
	}
	return out
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writes into a strings.Builder: cannot fail
	return b.String()
}

// renderPDF writes a one-page PDF 1.4 with the input's first lines in
// Helvetica, with a correct cross-reference table.
func renderPDF(title string, rows [][]string) []byte {
	var text strings.Builder
	text.WriteString("BT /F1 11 Tf 56 780 Td 14 TL\n")
	for i, l := range append([]string{"Converted from " + title}, lines(rows)...) {
		if i == 50 {
			break
		}
		fmt.Fprintf(&text, "(%s) '\n", pdfString(l))
	}
	text.WriteString("ET\n")
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", text.Len(), text.String()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// pdfString escapes what a PDF string literal needs; Latin-1 letters go out
// as octal escapes (WinAnsiEncoding agrees with Latin-1 there), anything
// else becomes "?".
func pdfString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r >= 0xa0 && r <= 0xff:
			fmt.Fprintf(&b, "\\%03o", r)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

func zipFiles(files [][2]string, storedFirst bool) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i, f := range files {
		h := &zip.FileHeader{Name: f[0], Method: zip.Deflate}
		if storedFirst && i == 0 {
			h.Method = zip.Store // ODF: "mimetype" first and uncompressed
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(f[1])); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

const xmlHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

func renderXLSX(rows [][]string) ([]byte, error) {
	var sheet strings.Builder
	sheet.WriteString(xmlHead + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
	for i, row := range rows {
		fmt.Fprintf(&sheet, `<row r="%d">`, i+1)
		for j, cell := range row {
			fmt.Fprintf(&sheet, `<c r="%s%d" t="inlineStr"><is><t xml:space="preserve">%s</t></is></c>`, column(j), i+1, esc(cell))
		}
		sheet.WriteString(`</row>`)
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	return zipFiles([][2]string{
		{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
			`</Types>`},
		{"_rels/.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
			`</Relationships>`},
		{"xl/workbook.xml", xmlHead + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
			`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
			`<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>` +
			`</Relationships>`},
		{"xl/worksheets/sheet1.xml", sheet.String()},
	}, false)
}

// column names the 0-based column i as a spreadsheet does: A … Z, AA …
func column(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

func renderDOCX(rows [][]string) ([]byte, error) {
	var doc strings.Builder
	doc.WriteString(xmlHead + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for _, l := range lines(rows) {
		fmt.Fprintf(&doc, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, esc(l))
	}
	doc.WriteString(`</w:body></w:document>`)
	return zipFiles([][2]string{
		{"[Content_Types].xml", xmlHead + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
			`</Types>`},
		{"_rels/.rels", xmlHead + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>` +
			`</Relationships>`},
		{"word/document.xml", doc.String()},
	}, false)
}

const odfNS = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ` +
	`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ` +
	`xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.3"`

func odtContent(rows [][]string) string {
	var b strings.Builder
	b.WriteString(xmlHead + `<office:document-content ` + odfNS + `><office:body><office:text>`)
	for _, l := range lines(rows) {
		fmt.Fprintf(&b, `<text:p>%s</text:p>`, esc(l))
	}
	b.WriteString(`</office:text></office:body></office:document-content>`)
	return b.String()
}

func odsContent(rows [][]string) string {
	var b strings.Builder
	b.WriteString(xmlHead + `<office:document-content ` + odfNS + `><office:body><office:spreadsheet><table:table table:name="Sheet1">`)
	for _, row := range rows {
		b.WriteString(`<table:table-row>`)
		for _, cell := range row {
			fmt.Fprintf(&b, `<table:table-cell office:value-type="string"><text:p>%s</text:p></table:table-cell>`, esc(cell))
		}
		b.WriteString(`</table:table-row>`)
	}
	b.WriteString(`</table:table></office:spreadsheet></office:body></office:document-content>`)
	return b.String()
}

func renderODF(mimeType, content string) ([]byte, error) {
	return zipFiles([][2]string{
		{"mimetype", mimeType},
		{"META-INF/manifest.xml", xmlHead + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">` +
			`<manifest:file-entry manifest:full-path="/" manifest:media-type="` + mimeType + `"/>` +
			`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>` +
			`</manifest:manifest>`},
		{"content.xml", content},
	}, true)
}

func renderHTML(title string, rows [][]string, sheet bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", html.EscapeString(title))
	if sheet {
		b.WriteString("<table>\n")
		for _, row := range rows {
			b.WriteString("<tr>")
			for _, cell := range row {
				fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(cell))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	} else {
		for _, l := range lines(rows) {
			fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(l))
		}
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}
