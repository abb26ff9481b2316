//! CSV: a header and rows of plain values (raw numbers, no units in cells).

use anyhow::Result;

/// A table ready for CSV: column names and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// One vector of cells per row, as long as the header.
    pub rows: Vec<Vec<String>>,
}

/// Renders a table as CSV bytes.
pub fn render(table: &Table) -> Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&table.header)?;
    for row in &table.rows {
        writer.write_record(row)?;
    }
    writer.into_inner().map_err(|e| anyhow::anyhow!("csv: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_table_renders_to_fixed_bytes() {
        let t = Table {
            header: vec!["block_size".into(), "note".into()],
            rows: vec![
                vec!["4096".into(), "a, quoted".into()],
                vec!["1".into(), "".into()],
            ],
        };
        let text = String::from_utf8(render(&t).unwrap()).unwrap();
        assert_eq!(text, "block_size,note\n4096,\"a, quoted\"\n1,\n");
    }
}
