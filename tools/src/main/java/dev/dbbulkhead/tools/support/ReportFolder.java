package dev.dbbulkhead.tools.support;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/** A {@code --report} folder, checked before a run so that minutes of measurement are not lost to a bad path. */
public final class ReportFolder {
    private ReportFolder() {}

    /**
     * Null when {@code dir} can be created (if missing) and written to, else what failed, naming the option and the
     * path: the folder is created and a file written and removed in it.
     */
    public static @Nullable String problem(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.delete(Files.createTempFile(dir, ".db-bulkhead-", ".probe"));
            return null;
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return "--report: cannot write to " + dir + ": " + why(e);
        }
    }

    private static String why(Exception e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason() + (f.getFile() != null ? " (" + f.getFile() + ")" : "");
        }
        String what = switch (e) {
            case NoSuchFileException none -> "no such file or folder";
            case AccessDeniedException denied -> "permission denied";
            case FileAlreadyExistsException file -> "a file of that name is in the way";
            default -> e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        };
        return e instanceof FileSystemException f && f.getFile() != null ? what + " (" + f.getFile() + ")" : what;
    }
}
