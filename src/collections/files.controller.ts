import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { AppError, ErrorCode } from '../common/app-error';
import { Consumes, MULTIPART_MEDIA_TYPE } from '../common/media-types';
import { AppConfig } from '../config/app-config';
import { FileContentDto, FileDto, FilePageDto, PassageDto } from './collection-responses.dto';
import { AddFileDto, ListFilesQueryDto, PatchFileDto } from './files.dto';
import { UploadFileDto } from './upload-file.dto';
import { FilesService } from './files.service';

interface UploadedFile {
  bytes: Buffer;
  fileName: string;
  contentType?: string;
}

@ApiTags('files')
@ApiSecurity('api-key')
@Controller('api/v1/collections/:id/files')
export class FilesController {
  constructor(
    private readonly files: FilesService,
    private readonly config: AppConfig,
  ) {}

  /** Answers at once with the file `pending`; ingestion runs as a job. */
  @Post()
  @ApiCreatedResponse({ type: FileDto, description: 'The new file, pending: download and indexing run in the background' })
  @ApiResponse({ status: 403, description: 'Adding files needs the editor or owner role' })
  @ApiResponse({
    status: 507,
    description: 'The disk holding DATA_DIR is full: the message and details say where and how many bytes to free',
  })
  add(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: AddFileDto) {
    return this.files.add(principal, id, { name: body.name, url: body.url, metadata: body.metadata });
  }

  @Post('upload')
  @Consumes(MULTIPART_MEDIA_TYPE)
  @ApiConsumes(MULTIPART_MEDIA_TYPE)
  @ApiBody({ type: UploadFileDto })
  @ApiCreatedResponse({ type: FileDto, description: 'The new file, pending: indexing runs in the background' })
  @ApiResponse({ status: 403, description: 'Adding files needs the editor or owner role' })
  @ApiResponse({
    status: 507,
    description: 'The disk holding DATA_DIR is full: the message and details say where and how many bytes to free',
  })
  async upload(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Req() request: FastifyRequest) {
    const { file, name, metadata } = await this.readForm(request);
    return this.files.upload(principal, id, { name: name ?? file.fileName, bytes: file.bytes, contentType: file.contentType, metadata });
  }

  @Get()
  @ApiOkResponse({ type: FilePageDto, description: 'Oldest first' })
  async list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: ListFilesQueryDto) {
    const { offset, limit, status, filter } = query;
    const result = await this.files.list(
      principal,
      id,
      { offset, limit },
      status,
      filter === undefined ? undefined : jsonField('filter', filter),
    );
    return { ...result, offset, limit };
  }

  @Get(':fileId')
  @ApiOkResponse({ type: FileDto })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('fileId') fileId: string) {
    return this.files.get(principal, id, fileId);
  }

  @Get(':fileId/content')
  @ApiOkResponse({ type: FileContentDto })
  @ApiResponse({ status: 409, description: 'The file is not indexed (yet, or its ingestion failed)' })
  content(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('fileId') fileId: string) {
    return this.files.content(principal, id, fileId);
  }

  @Get(':fileId/passages/:passageId')
  @ApiOkResponse({ type: PassageDto, description: 'One passage of the file, as a search result names it' })
  passage(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('fileId') fileId: string,
    @Param('passageId') passageId: string,
  ) {
    return this.files.passage(principal, id, fileId, passageId);
  }

  @Patch(':fileId')
  @ApiOkResponse({ type: FileDto, description: 'The file with its metadata changed; nothing is re-embedded' })
  @ApiResponse({ status: 403, description: 'Changing files needs the editor or owner role' })
  patch(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('fileId') fileId: string, @Body() body: PatchFileDto) {
    return this.files.patch(principal, id, fileId, { metadata: body.metadata });
  }

  @Delete(':fileId')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Deleted, with its passages, vectors and bytes' })
  @ApiResponse({ status: 403, description: 'Deleting files needs the editor or owner role' })
  async delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('fileId') fileId: string) {
    await this.files.delete(principal, id, fileId);
  }

  /** One `file` part and optional `name` and `metadata` (JSON) fields, in any order. */
  private async readForm(request: FastifyRequest): Promise<{ file: UploadedFile; name?: string; metadata?: unknown }> {
    if (!request.isMultipart()) {
      throw new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Expected a multipart/form-data body with a "file" part');
    }
    let file: UploadedFile | undefined;
    let name: string | undefined;
    let metadata: unknown;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || file) {
            part.file.resume();
            throw AppError.validation([{ field: part.fieldname, reason: 'only one file part, named "file", is accepted' }]);
          }
          file = await readFilePart(part);
        } else if (part.fieldname === 'name') {
          if (name !== undefined) throw AppError.validation([{ field: 'name', reason: 'is given more than once' }]);
          name = String(part.value);
        } else if (part.fieldname === 'metadata') {
          if (metadata !== undefined) throw AppError.validation([{ field: 'metadata', reason: 'is given more than once' }]);
          metadata = jsonField('metadata', String(part.value));
        } else {
          throw AppError.validation([{ field: part.fieldname, reason: 'unknown field; the form takes "file", "name" and "metadata"' }]);
        }
      }
    } catch (error) {
      throw this.formError(error);
    }
    if (!file) throw AppError.validation([{ field: 'file', reason: 'a file part named "file" is required' }]);
    return { file, name, metadata };
  }

  private formError(error: unknown): unknown {
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') {
      return AppError.fileTooLarge(this.config.MAX_FILE_BYTES);
    }
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      return AppError.validation([{ field: 'file', reason: 'the form takes one "file" part and optional "name" and "metadata" fields' }]);
    }
    if (error instanceof AppError) return error;
    // Everything else here is the form itself failing to parse (no boundary, a body cut short,
    // a broken part header): the client's to fix, not a fault of the service.
    return AppError.validation([{ field: 'body', reason: `is not a well-formed multipart/form-data body: ${(error as Error).message}` }]);
  }
}

/** A form field or query parameter that carries JSON. */
function jsonField(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw AppError.validation([{ field, reason: `is not valid JSON: ${(error as Error).message}` }]);
  }
}

async function readFilePart(part: MultipartFile): Promise<UploadedFile> {
  return { bytes: await part.toBuffer(), fileName: part.filename, contentType: part.mimetype };
}
