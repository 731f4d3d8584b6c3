package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A statement's shape: literals and parameters out, words in lower case, spacing and comments dropped. */
@Tag("no-db")
class ShapesTest {
    @Test
    void literalsParametersSpacingAndCaseDoNotChangeTheShape() {
        long one = Shapes.of("SELECT * FROM orders WHERE id = 42", false);
        assertThat(Shapes.of("select *  from Orders\n where ID=7 -- the seventh", false))
                .isEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM orders WHERE id = $1", false)).isEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM orders WHERE id = ?", false)).isEqualTo(one);
        assertThat(Shapes.of("SELECT * /* c */ FROM orders WHERE id = 'x''y'", false))
                .isEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM orders WHERE id = E'\\\\x'", false)).isEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM orders WHERE id = $tag$a;b$tag$", false))
                .isEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM orders WHERE id = 1.5e3", false)).isEqualTo(one);
    }

    @Test
    void namesAndStructureDo() {
        long one = Shapes.of("SELECT * FROM orders WHERE id = 42", false);
        assertThat(Shapes.of("SELECT * FROM order_lines WHERE id = 42", false)).isNotEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM \"Orders\" WHERE id = 42", false)).isNotEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM orders WHERE id > 42", false)).isNotEqualTo(one);
        assertThat(Shapes.of("SELECT count(*) FROM orders", false)).isNotEqualTo(one);
    }

    @Test
    void mySqlQuotesAndCommentsAreReadAsMySqlReadsThem() {
        long one = Shapes.of("SELECT * FROM `orders` WHERE note = 'a'", true);
        assertThat(Shapes.of("select * from `orders` where note = \"b\" # why", true))
                .isEqualTo(one);
        assertThat(Shapes.of("SELECT * FROM `orders` WHERE note = 'it\\'s'", true))
                .isEqualTo(one);
    }

    @Test
    void theTextNamesTheShapeShortened() {
        assertThat(Shapes.text("SELECT *  FROM Orders WHERE id = 42 AND note = 'x'", false, 80))
                .isEqualTo("select * from orders where id = ? and note = ?");
        assertThat(Shapes.text("SELECT " + "a, ".repeat(100) + "b FROM t", false, 20))
                .hasSize(20)
                .endsWith("…");
    }
}
