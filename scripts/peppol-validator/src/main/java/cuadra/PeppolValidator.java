package cuadra;

import com.helger.diagnostics.error.IError;
import com.helger.diver.api.coord.DVRCoordinate;
import com.helger.phive.api.execute.ValidationExecutionManager;
import com.helger.phive.api.executorset.IValidationExecutorSet;
import com.helger.phive.api.executorset.ValidationExecutorSetRegistry;
import com.helger.phive.api.result.ValidationResult;
import com.helger.phive.api.result.ValidationResultList;
import com.helger.phive.api.validity.IValidityDeterminator;
import com.helger.phive.peppol.PeppolValidation;
import com.helger.phive.peppol.PeppolValidation2026_05;
import com.helger.phive.xml.source.IValidationSourceXML;
import com.helger.phive.xml.source.ValidationSourceXML;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Locale;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;

/**
 * Validates UBL 2.1 invoices and credit notes against Peppol BIS Billing 3.0 with phive's
 * Peppol rules: the UBL 2.1 XSD, the CEN EN 16931 UBL Schematron and the OpenPEPPOL BIS 3
 * Schematron (release 2026-05), in that order, as the Peppol network's validators do.
 *
 * Two ways to run it:
 *   java -jar peppol-validator.jar a.xml b.xml   one JSON line per file on stdout
 *   java -jar peppol-validator.jar --serve       reads "<id> <base64 of the XML>" lines on stdin
 *                                                and answers one JSON line each, in order; prints
 *                                                {"ready":...} first. One JVM for many documents.
 * Answer: {"id","valid","vesid","artefacts":[{"type","path","errors"}],"errors":[{"level","id",
 * "text","location","artefact"}],"ms"}. "valid" is false when any artefact reports an error
 * (a Schematron "fatal" or an XSD error); warnings are listed with level "WARN".
 */
public final class PeppolValidator {
  private static final ValidationExecutorSetRegistry<IValidationSourceXML> REGISTRY = new ValidationExecutorSetRegistry<>();

  private PeppolValidator() {}

  private static final String NS = " xmlns:cac=\"urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2\""
      + " xmlns:cbc=\"urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\"";
  /** Smallest documents the UBL 2.1 XSD accepts, so that the Schematron layers run (and compile). */
  private static final String WARM_UP_INVOICE = "<Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\"" + NS + ">"
      + "<cbc:ID>1</cbc:ID><cbc:IssueDate>2026-01-01</cbc:IssueDate>"
      + "<cac:AccountingSupplierParty><cac:Party/></cac:AccountingSupplierParty><cac:AccountingCustomerParty><cac:Party/></cac:AccountingCustomerParty>"
      + "<cac:LegalMonetaryTotal><cbc:PayableAmount currencyID=\"EUR\">0</cbc:PayableAmount></cac:LegalMonetaryTotal>"
      + "<cac:InvoiceLine><cbc:ID>1</cbc:ID><cbc:LineExtensionAmount currencyID=\"EUR\">0</cbc:LineExtensionAmount><cac:Item/></cac:InvoiceLine></Invoice>";
  private static final String WARM_UP_CREDIT_NOTE = "<CreditNote xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2\"" + NS + ">"
      + "<cbc:ID>1</cbc:ID><cbc:IssueDate>2026-01-01</cbc:IssueDate>"
      + "<cac:AccountingSupplierParty><cac:Party/></cac:AccountingSupplierParty><cac:AccountingCustomerParty><cac:Party/></cac:AccountingCustomerParty>"
      + "<cac:LegalMonetaryTotal><cbc:PayableAmount currencyID=\"EUR\">0</cbc:PayableAmount></cac:LegalMonetaryTotal>"
      + "<cac:CreditNoteLine><cbc:ID>1</cbc:ID><cbc:LineExtensionAmount currencyID=\"EUR\">0</cbc:LineExtensionAmount><cac:Item/></cac:CreditNoteLine></CreditNote>";

  public static void main(String[] args) throws Exception {
    PeppolValidation.initStandard(REGISTRY);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (args.length == 1 && args[0].equals("--serve")) {
      // Compiles the Schematron XSLTs before answering "ready" (the first run of a rule set pays
      // for Saxon's compilation), so a caller can overlap it with its own start-up.
      long warm = System.nanoTime();
      boolean warmed = validate("warm-up-invoice", WARM_UP_INVOICE.getBytes(StandardCharsets.UTF_8)).contains("\"skipped\":false,\"errors\":0},{\"type\":\"schematron-xslt\"")
          & validate("warm-up-credit-note", WARM_UP_CREDIT_NOTE.getBytes(StandardCharsets.UTF_8)).contains("\"skipped\":false,\"errors\":0},{\"type\":\"schematron-xslt\"");
      out.println("{\"ready\":true,\"rules\":" + str(PeppolValidation2026_05.VERSION_STR) + ",\"warmed\":" + warmed
          + ",\"warm_up_ms\":" + (System.nanoTime() - warm) / 1_000_000 + "}");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) continue;
        int space = line.indexOf(' ');
        String id = space < 0 ? "" : line.substring(0, space);
        String answer;
        try {
          byte[] xml = Base64.getDecoder().decode(space < 0 ? line : line.substring(space + 1).trim());
          answer = validate(id, xml);
        } catch (Exception e) {
          answer = "{\"id\":" + str(id) + ",\"valid\":false,\"failure\":" + str(String.valueOf(e)) + "}";
        }
        out.println(answer);
      }
      return;
    }
    if (args.length == 0) {
      System.err.println("usage: peppol-validator <file.xml>... | --serve");
      System.exit(2);
    }
    boolean allValid = true;
    for (String file : args) {
      String answer = validate(file, Files.readAllBytes(Path.of(file)));
      allValid &= answer.contains("\"valid\":true");
      out.println(answer);
    }
    System.exit(allValid ? 0 : 1);
  }

  static String validate(String id, byte[] xml) throws Exception {
    long started = System.nanoTime();
    Document doc = parse(xml);
    String root = doc.getDocumentElement().getLocalName();
    DVRCoordinate vesid;
    if ("Invoice".equals(root)) vesid = PeppolValidation2026_05.VID_OPENPEPPOL_INVOICE_UBL_V3;
    else if ("CreditNote".equals(root)) vesid = PeppolValidation2026_05.VID_OPENPEPPOL_CREDIT_NOTE_UBL_V3;
    else throw new IllegalArgumentException("not a UBL Invoice or CreditNote: " + root);
    IValidationExecutorSet<IValidationSourceXML> ves = REGISTRY.getOfID(vesid);
    ValidationResultList results = ValidationExecutionManager.executeValidation(
        IValidityDeterminator.createDefault(), ves, ValidationSourceXML.create(id, doc), Locale.US);

    StringBuilder artefacts = new StringBuilder();
    StringBuilder errors = new StringBuilder();
    boolean valid = true;
    for (ValidationResult r : results) {
      String path = r.getValidationArtefact().getRuleResourcePath();
      int count = 0;
      for (IError e : r.getErrorList()) {
        if (e.isError()) { valid = false; count++; }
        if (errors.length() > 0) errors.append(',');
        errors.append("{\"level\":").append(str(e.getErrorLevel().getID()))
            .append(",\"id\":").append(str(e.getErrorID()))
            .append(",\"text\":").append(str(e.getErrorText(Locale.US)))
            .append(",\"location\":").append(str(e.hasErrorLocation() ? e.getErrorLocation().getAsString() : e.getErrorFieldName()))
            .append(",\"artefact\":").append(str(path)).append('}');
      }
      if (artefacts.length() > 0) artefacts.append(',');
      artefacts.append("{\"type\":").append(str(r.getValidationArtefact().getValidationType().getID()))
          .append(",\"path\":").append(str(path))
          .append(",\"skipped\":").append(r.isSkipped())
          .append(",\"errors\":").append(count).append('}');
      if (r.isSkipped()) valid = false;
    }
    long ms = (System.nanoTime() - started) / 1_000_000;
    return "{\"id\":" + str(id) + ",\"valid\":" + valid + ",\"vesid\":" + str(vesid.getAsSingleID())
        + ",\"artefacts\":[" + artefacts + "],\"errors\":[" + errors + "],\"ms\":" + ms + "}";
  }

  /** Namespace-aware DOM; DOCTYPEs are refused (no external entities ever). */
  static Document parse(byte[] xml) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    f.setXIncludeAware(false);
    f.setExpandEntityReferences(false);
    return f.newDocumentBuilder().parse(new ByteArrayInputStream(xml));
  }

  /** A JSON string literal (or null). */
  static String str(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }
}
