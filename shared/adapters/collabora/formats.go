package collabora

import (
	"fmt"
	"path"
	"slices"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Formats lists the target formats Convert accepts, sorted.
func Formats() []string { return sb.ConvertFormats() }

// ContentType returns the MIME type of a target format, "" when Convert does
// not accept it.
func ContentType(format string) string { return sb.ConvertContentType(normalizeFormat(format)) }

// Document kinds, after the LibreOffice module that opens an input. Each LOK
// export map (aWriterExtensionMap, aCalcExtensionMap in LibreOffice's
// desktop/source/lib/init.cxx) has only its own module's formats: a text
// cannot become xlsx, a spreadsheet cannot become docx.
const (
	kindText  = "text"
	kindSheet = "spreadsheet"
)

var inputKinds = map[string]string{
	"csv": kindSheet, "xlsx": kindSheet, "xls": kindSheet, "ods": kindSheet,
	"html": kindText, "htm": kindText, "odt": kindText, "docx": kindText,
	"doc": kindText, "rtf": kindText, "txt": kindText,
}

var outputKinds = map[string][]string{
	"pdf":  {kindText, kindSheet},
	"html": {kindText, kindSheet},
	"docx": {kindText},
	"odt":  {kindText},
	"xlsx": {kindSheet},
	"ods":  {kindSheet},
}

func normalizeFormat(format string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(format), "."))
}

// checkConversion refuses what cannot work before anything is sent. Inputs
// with an extension outside the table go through: LibreOffice detects many
// formats by content, and Collabora answers 400 when it cannot.
func checkConversion(op, asked, format, fileName string) error {
	if sb.ConvertContentType(format) == "" {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("cannot convert to %q; Collabora conversion supports %s", asked, strings.Join(Formats(), ", ")))
	}
	if fileName == "" || fileName == "." || fileName == "/" || fileName == ".." {
		return sb.E(op, sb.EINVALID, "a file name with an extension is needed (for example report.csv); Collabora picks the import filter by it")
	}
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(fileName), "."))
	switch ext {
	case "md", "markdown":
		return sb.E(op, sb.EINVALID, fmt.Sprintf("%s is Markdown, which Collabora does not read (it would come out as plain text); write HTML and convert that, or deliver the Markdown file as it is (Nextcloud displays .md)", fileName))
	}
	kind, known := inputKinds[ext]
	if known && !slices.Contains(outputKinds[format], kind) {
		var can []string
		for _, f := range Formats() {
			if slices.Contains(outputKinds[f], kind) {
				can = append(can, f)
			}
		}
		return sb.E(op, sb.EINVALID, fmt.Sprintf("a %s file (%s) cannot become %s; it can become %s", kind, fileName, format, strings.Join(can, ", ")))
	}
	return nil
}
